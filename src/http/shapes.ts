// The response shapes of app-api.md, each produced here and nowhere else: the standard envelope,
// the errors body and the rate-limit body. (Bare bodies are plain `{ key: resource }` objects.)

/** Which body an endpoint's errors use (C5.1). Declared per route in `config.shape`. */
export type ErrorShape = 'envelope' | 'errors';

export interface Pagination {
  page: number;
  limit: number;
  totalPages: number;
  resultCount: number;
  totalResult: number;
}

export interface Envelope<T> {
  status: number;
  state: 'success' | 'error' | 'info' | 'warning';
  message: string | null;
  data: T | null;
  count: number | null;
  pagination: Pagination | null;
}

/** A success envelope, typed as exactly what `envelopeOf` (src/http/schemas.ts) declares. */
export type SuccessEnvelope<T> = Envelope<T> & { state: 'success'; message: null; data: T; count: null; pagination: null };

export function envelope<T>(data: T, status = 200): SuccessEnvelope<T> {
  return { status, state: 'success', message: null, data, count: null, pagination: null };
}

/** A paged list's success envelope (C5.3), typed as exactly what `envelopeListOf` declares. */
export type SuccessListEnvelope<T> = Envelope<T> & { state: 'success'; message: null; data: T; count: number; pagination: Pagination };

export function envelopeList<T>(data: T, page: { page: number; limit: number }, resultCount: number, total: number, status = 200): SuccessListEnvelope<T> {
  return {
    status,
    state: 'success',
    message: null,
    data,
    count: total,
    pagination: {
      page: page.page,
      limit: page.limit,
      totalPages: Math.ceil(total / page.limit),
      resultCount,
      totalResult: total,
    },
  };
}

/** The longest message an error body carries (characters); past it the message is cut. */
export const MAX_ERROR_MESSAGE_CHARS = 1000;

/**
 * A message within MAX_ERROR_MESSAGE_CHARS. Messages name what was wrong, and some quote the value
 * (an unknown scope, an id that is not a product): a client's megabyte must not come back in the
 * answer, nor into the logs and dashboards that show it. One bound for every error, here, rather
 * than one at each message that quotes input (test/fuzz-openapi.test.ts sweeps every route).
 */
export function boundedMessage(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  let end = MAX_ERROR_MESSAGE_CHARS;
  // Never half a surrogate pair: the body stays valid UTF-8.
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${message.slice(0, end)}... (${message.length - end} more characters)`;
}

export function envelopeError(status: number, message: string): Envelope<null> {
  return { status, state: 'error', message: boundedMessage(message), data: null, count: null, pagination: null };
}

export function errorsBody(message: string, fields?: Record<string, string[]>): { errors: Record<string, string[]> } {
  if (!fields || !Object.keys(fields).length) return { errors: { base: [boundedMessage(message)] } };
  return { errors: Object.fromEntries(Object.entries(fields).map(([field, problems]) => [boundedMessage(field), problems.map(boundedMessage)])) };
}

export const RATE_LIMIT_WINDOW_SECONDS = 1;

export function rateLimitBody() {
  return {
    error: 'Too Many Requests',
    message: `Rate limit exceeded. Retry after ${RATE_LIMIT_WINDOW_SECONDS} second(s).`,
  };
}

/**
 * The error bodies above as JSON Schemas, for the API reference (src/http/openapi.ts): what a
 * route's `config.shape` promises, and the App API's rate-limit body.
 */
export const errorShapeSchemas = {
  envelope: {
    type: 'object',
    required: ['status', 'state', 'message', 'data', 'count', 'pagination'],
    properties: {
      status: { type: 'integer' },
      state: { type: 'string', enum: ['error'] },
      message: { type: 'string' },
      data: { type: 'null' },
      count: { type: 'null' },
      pagination: { type: 'null' },
    },
  },
  errors: {
    type: 'object',
    required: ['errors'],
    properties: {
      errors: { type: 'object', description: 'field name (or base) -> messages', additionalProperties: { type: 'array', items: { type: 'string' } } },
    },
  },
  rateLimit: {
    type: 'object',
    required: ['error', 'message'],
    properties: { error: { type: 'string' }, message: { type: 'string' } },
  },
} as const;
