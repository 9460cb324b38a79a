// The one root logger of a process (pino, JSON lines). main.ts makes it from LOG_LEVEL, Fastify logs
// requests through it (`loggerInstance`), and background work logs through `deps.log`; tests hand in
// a silent one or one writing to a capture stream.
//
// What never reaches a log line (docs/decisions.md "Hardening: observability"):
// - secrets in a path: a checkout's token (C15.1);
// - query values of a URL, except a few harmless paging keys: `?key=` (order status page), a
//   mistaken `?access_token=`, `?email=` are secrets or personal data;
// - headers (authorization, cookies) and bodies: the request serializer names method and path only;
// - anything an error carries beyond its kind, code, message and stack: driver errors may carry the
//   SQL parameters (customer data), HTTP client errors the request and response. Database errors
//   are already reduced at the source (src/db/errors.ts); the error serializer is the second fence.
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Query keys whose values say how a list is paged or filtered, never who or what secret. */
const HARMLESS_QUERY_KEYS = new Set(['page', 'limit', 'since_id', 'fields', 'status', 'topic', 'order', 'sort', 'direction']);
/** A value kept for a harmless key must look like an id, a number or a word list. */
const HARMLESS_VALUE = /^[A-Za-z0-9_.,:-]{0,64}$/;
/** A key name is kept when it looks like a parameter name; a token pasted as a key is not. */
const KEY_NAME = /^[A-Za-z_][A-Za-z0-9_.[\]-]{0,31}$/;
export const REDACTED = '[REDACTED]';
const MAX_PATH = 512;
const MAX_QUERY_PARTS = 30;

/**
 * Path segments that are secrets: a storefront checkout's token (C15.1) is the only key to the
 * buyer's checkout, and it travels in the path (`/storefront/{store}/checkouts/{token}/...`).
 * Matched loosely (any case, repeated slashes): a URL the router refuses is logged too.
 */
const SECRET_PATH_SEGMENTS = [/^(\/+storefront\/+[^/]*\/+checkouts\/+)[^/]+/i];

/** The URL as it may be logged: the path with its secret segments redacted, and the query with every value but harmless ones redacted. */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  for (const secret of SECRET_PATH_SEGMENTS) path = path.replace(secret, `$1${REDACTED}`);
  if (path.length > MAX_PATH) path = path.slice(0, MAX_PATH) + '...';
  if (q === -1) return path;
  const parts: string[] = [];
  for (const part of url.slice(q + 1).split('&', MAX_QUERY_PARTS)) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const key = eq === -1 ? part : part.slice(0, eq);
    if (!KEY_NAME.test(key)) parts.push(REDACTED);
    else if (eq === -1) parts.push(key);
    else parts.push(HARMLESS_QUERY_KEYS.has(key) && HARMLESS_VALUE.test(part.slice(eq + 1)) ? part : `${key}=${REDACTED}`);
  }
  return parts.length ? `${path}?${parts.join('&')}` : path;
}

/** Error properties worth logging: what went wrong and where, never the data it went wrong on. */
const ERROR_FIELDS = ['code', 'kind', 'status', 'statusCode', 'constraint', 'table', 'column', 'statement', 'errno', 'syscall', 'address', 'port'] as const;

export function loggableError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) {
    // A rejection with a non-error value: its type only (the value may be anything).
    return err === null || err === undefined ? err : { type: typeof err };
  }
  const out: Record<string, unknown> = { type: err.constructor?.name ?? err.name, message: err.message, stack: err.stack };
  for (const key of ERROR_FIELDS) {
    const value = (err as any)[key];
    if (value !== undefined && (typeof value === 'string' || typeof value === 'number')) out[key] = value;
  }
  if (depth < 3 && err.cause !== undefined) out.cause = loggableError(err.cause, depth + 1);
  if (depth < 3 && err instanceof AggregateError) out.errors = err.errors.slice(0, 5).map((e) => loggableError(e, depth + 1));
  return out;
}

const serializers = {
  // Replaces Fastify's request serializer (which logs the raw URL and the client's address).
  req: (req: { method?: string; url?: string }) => ({ method: req.method, url: loggableUrl(req.url ?? '') }),
  res: (reply: { statusCode?: number }) => ({ statusCode: reply.statusCode }),
  err: loggableError,
};

export interface LoggerOptions {
  level: string;
  /** Where the JSON lines go (default: stdout). Tests pass a capture stream. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      serializers,
      // A header object or a password logged by mistake somewhere is still censored.
      redact: {
        paths: ['headers.authorization', 'headers.cookie', 'req.headers.authorization', 'req.headers.cookie', 'password', '*.password'],
        censor: REDACTED,
      },
    },
    options.destination,
  );
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
