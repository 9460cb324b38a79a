// Every decoded client input passes here before any rule, query or serialiser sees it (issue 10):
// JSON bodies (the content-type parser below), query strings and path parameters (the
// preValidation hook), form and multipart text fields (their readers call `assertCleanInput`).
//
// Why these three checks, and only these:
// - NUL (U+0000): PostgreSQL refuses it in text (22021) and in jsonb (22P05); nothing legitimate
//   sends it. Other control characters are stored as they are (PostgreSQL takes them).
// - An unpaired UTF-16 surrogate (JSON `"\ud800"`): not a Unicode character; jsonb refuses it
//   (22P02), and encoded to UTF-8 for a text column it would silently become U+FFFD.
// - Nesting depth: JSON.stringify, jsonb and every recursive reader overflow on a body nested
//   thousands of levels deep (a 1 MB body holds 500,000 levels). Size is bounded by the body limit.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, badRequest } from './errors.js';
// One rule with the records of third parties' text: what PostgreSQL stores, as text and in jsonb.
import { firstUnstorable } from '../functions/runtime/storable-text.js';

/** Deepest nesting of objects and arrays in a JSON value; no API body needs more than a handful. */
export const MAX_JSON_DEPTH = 64;

/** Largest request body (bytes); a larger one is a 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

const unsafeText = (where: string) => {
  const problem = 'must not contain NUL characters or unpaired UTF-16 surrogates';
  return badRequest(`${where} ${problem}`, { [where]: [problem] });
};

/**
 * Throws a 400 when `value` (a parsed JSON value, a query object, path parameters) holds an unsafe
 * string, key included, or nests deeper than `maxDepth`; the first such place in document order is
 * named. `where` names the value in the message ("body", "query"); a field's path is appended. The
 * walk is the runtime's (firstUnstorable), the one that checks function outputs.
 */
export function assertCleanInput(value: unknown, where: string, maxDepth = MAX_JSON_DEPTH): void {
  const found = firstUnstorable(value, where, maxDepth);
  if (!found) return;
  if (found.problem === 'depth') throw badRequest(`${where} is nested too deeply (at most ${maxDepth} levels)`);
  throw unsafeText(found.path);
}

/**
 * JSON typed into a form field (a dashboard form): its value, or a 400 naming the field when the
 * text is not JSON or holds what a JSON body may not (assertCleanInput).
 */
export function parseJsonField(text: string, field: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(`${field} is not valid JSON`);
  }
  assertCleanInput(value, field);
  return value;
}

/** `assertCleanInput` as a test, for values that are not a request part (JSON text in a field). */
export function isCleanInput(value: unknown, maxDepth = MAX_JSON_DEPTH): boolean {
  try {
    assertCleanInput(value, 'value', maxDepth);
    return true;
  } catch {
    return false;
  }
}

/** A field's path as the errors body names it: `body.product.title` -> `product.title`, `body[0]` -> `[0]`. */
function fieldPath(path: string, prefix: string): string {
  if (path === prefix) return 'base';
  return path[prefix.length] === '[' ? path.slice(prefix.length) : path.slice(prefix.length + 1) || '(empty key)';
}

/**
 * `assertCleanInput` for a request part, with errors that name the field the way validation errors
 * do (`{ errors: { "product.title": [...] } }`), so both error shapes read naturally.
 */
export function assertCleanPart(value: unknown, part: 'body' | 'query' | 'params'): void {
  try {
    assertCleanInput(value, part);
  } catch (err) {
    if (!(err instanceof AppError) || !err.fields) throw err;
    const [path, messages] = Object.entries(err.fields)[0];
    const field = fieldPath(path, part);
    throw badRequest(`${field} ${messages[0]}`, { [field]: messages });
  }
}

/**
 * A JSON body parser for `addContentTypeParser`: Fastify's own parse (prototype poisoning through
 * `__proto__` or `constructor.prototype` refused, as by default), then the checks above. Errors are
 * AppErrors, so they render in the route's shape. `empty` is what an empty body reads as: by
 * default no body at all. app-api.md Conventions: "Requests carry `Content-Type: application/json`",
 * and clients that set it on every request send it on a DELETE or a body-less fulfillment too;
 * Fastify refuses an empty JSON body, which made those a 400 the same request without the header
 * does not get (test/empty-json-body-sweep.test.ts).
 */
export function boundedJsonParser(app: FastifyInstance, opts: { empty?: () => unknown } = {}) {
  const parse = app.getDefaultJsonParser('error', 'error');
  const empty = opts.empty ?? (() => undefined);
  return (request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, empty());
    parse(request, text, (err: Error | null, parsed?: unknown) => {
      if (err) return done(badRequest('Malformed JSON body'));
      try {
        assertCleanPart(parsed, 'body');
      } catch (e) {
        return done(e as Error);
      }
      done(null, parsed);
    });
  };
}

/** Replaces Fastify's JSON parser on `app` (and the plugins registered inside it afterwards). */
export function useBoundedJson(app: FastifyInstance, opts: { empty?: () => unknown } = {}): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, boundedJsonParser(app, opts));
}

/**
 * The early check of the decoded query string and path parameters, as a preValidation hook: after
 * each surface's authentication (onRequest), so a stranger still gets its 401 first and an App API
 * error still carries the version header; before schema validation, handlers and SQL.
 */
export function guardQueryAndParams(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  // A callback hook, not an async one: no promise per request on the App API's hot path, and
  // most requests (no query, no parameters) pass without a walk.
  try {
    if (hasKeys(request.query)) assertCleanPart(request.query, 'query');
    if (hasKeys(request.params)) assertCleanPart(request.params, 'params');
  } catch (err) {
    return done(err as Error);
  }
  done();
}

function hasKeys(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  for (const _ in value) return true;
  return false;
}
