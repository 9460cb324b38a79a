// Every error, thrown anywhere, is rendered here in the shape its route declared (C5.1). Unknown
// errors become a 500 without internal detail; the log line carries the request id (bound by
// Fastify as reqId) and the error reduced to what is safe to log (src/platform/logger.ts).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { AppError } from './errors.js';
import { validationError } from './validation.js';
import { MAX_BODY_BYTES } from './input-guard.js';
import { envelopeError, errorsBody, rateLimitBody, type ErrorShape } from './shapes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Error body shape of the route; envelope when not given. */
    shape?: ErrorShape;
  }
  interface FastifyRequest {
    /** Set by a surface plugin for requests that match no route (their 404 needs a shape too). */
    fallbackShape?: ErrorShape;
  }
}

export function shapeOf(request: FastifyRequest): ErrorShape {
  return request.routeOptions.config?.shape ?? request.fallbackShape ?? 'envelope';
}

/** Fastify's own errors (bad JSON, schema validation, body too large) as AppErrors. */
function fromFastify(err: FastifyError): AppError | null {
  // A schema check failed (src/http/validation.ts words it).
  if (err.validation) return validationError(err.validation as ErrorObject[], err.validationContext);
  const code = err.statusCode ?? 500;
  if (code === 415) return new AppError('bad_request', 'Unsupported content type');
  // The body limit is a 413 (issue 10). A multipart form's count limits (files, fields, parts) also
  // carry 413 from their library, but are the form's rules, kept as 400 (variants.admin.ts).
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AppError('payload_too_large', `Request body is too large (at most ${MAX_BODY_BYTES} bytes)`);
  if (code === 413) return new AppError('bad_request', 'Request body breaks a form limit');
  if (code >= 400 && code < 500 && code !== 404) return new AppError('bad_request', err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.name === 'SyntaxError' ? 'Malformed JSON body' : err.message);
  if (code === 404) return new AppError('not_found', 'Not Found');
  return null;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError) {
  if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', error.retryAfterSeconds);
  // The App API rate limit has a body of its own (C5.1); every other error takes the route's shape.
  if (error.kind === 'rate_limited') return reply.code(429).send(rateLimitBody());
  if (error.kind === 'unavailable') reply.header('Retry-After', 1);
  const body = shapeOf(request) === 'errors' ? errorsBody(error.message, error.fields) : envelopeError(error.status, error.message);
  return reply.code(error.status).send(body);
}

/** Any thrown error as the AppError it is answered with; an unexpected one is logged and becomes a 500. */
export function asAppError(err: Error, request: FastifyRequest): AppError {
  const appError = err instanceof AppError ? err : fromFastify(err as FastifyError);
  if (appError) return appError;
  request.log.error({ err }, 'unexpected error');
  return new AppError('internal', `Internal server error (request ${request.id})`);
}

export function installErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request, reply) => sendError(request, reply, asAppError(err, request)));
  app.setNotFoundHandler((request, reply) => sendError(request, reply, new AppError('not_found', 'Not Found')));
}
