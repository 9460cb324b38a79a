// The closed set of error kinds and their HTTP status, in one place (design.md). Rules throw these;
// the error handler renders them in the shape of the endpoint that failed.

export type ErrorKind =
  | 'bad_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  /** The resource existed and no longer may be used (an expired checkout, C15.1). */
  | 'gone'
  | 'payload_too_large'
  | 'unprocessable'
  | 'rate_limited'
  | 'throttled'
  | 'internal'
  /** A dependency (the rate-limit store) is down: try again shortly (Retry-After). */
  | 'unavailable';

export const STATUS_OF: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  throttled: 429,
  internal: 500,
  unavailable: 503,
};

export class AppError extends Error {
  readonly status: number;
  /** Sent as `Retry-After` (seconds) with the error. */
  retryAfterSeconds?: number;
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Per-field messages for the errors body (`{ errors: { title: ["can't be blank"] } }`). */
    readonly fields?: Record<string, string[]>,
  ) {
    // An expected client error needs no stack trace, and capturing one is a large share of the
    // cost of a refused request on the App API's hot path. 500s keep theirs.
    const limit = Error.stackTraceLimit;
    if (kind !== 'internal') Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.status = STATUS_OF[kind];
  }
}

export const badRequest = (message: string, fields?: Record<string, string[]>) => new AppError('bad_request', message, fields);
export const unauthenticated = (message = 'Invalid or missing credentials') => new AppError('unauthenticated', message);
export const forbidden = (message = 'Forbidden') => new AppError('forbidden', message);
export const notFound = (message = 'Not Found') => new AppError('not_found', message);
export const conflict = (message: string) => new AppError('conflict', message);
/**
 * 429 in the endpoint's own error shape, with `Retry-After` (too many failed logins). Not the App
 * API's rate limit, `rate_limited`, whose 429 always has the rate-limit body (C5.1).
 */
export const throttled = (message: string, retryAfterSeconds: number) =>
  Object.assign(new AppError('throttled', message), { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)) });
export const unavailable = (message = 'Service temporarily unavailable') => new AppError('unavailable', message);
export const unprocessable = (message: string, fields?: Record<string, string[]>) => new AppError('unprocessable', message, fields);
