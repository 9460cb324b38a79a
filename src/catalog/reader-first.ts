// Reader first, schema as the floor (issue 11 section 1). Most routes let the schema answer a bad
// body before the handler runs. A few cannot, because their documented answer depends on what the
// schema does not know:
// - collections answer every field failure with 422 (app-api.md Errors), where validation says 400;
// - a product listing first checks the app's sales channel, a variant update first finds the
//   variant: their bodies are judged only after that (C6.2, C7.3);
// - metafields and product ids are named by index in brackets (`metafields[3]: ...`), with the
//   lowest index across every kind of problem, database lookups included (C6.6, C14.5).
// Such a route is registered with `attachValidation: true`: Fastify still validates the request
// with the route's schemas but hands the verdict to the handler instead of throwing it. The handler
// runs its reader (which words the failures as before) and then calls `assertSchemaPassed`: a
// request the schema refused and the reader let through still fails, in the schema's words, before
// anything is written. Until then `request.body` has its schema's static type only as a promise.
import type { FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { AppError, type ErrorKind } from '../http/errors.js';
import { validationError } from '../http/validation.js';

/** Throws the schema's verdict attached to the request, if it has one, as an error of `kind`. */
export function assertSchemaPassed(request: FastifyRequest, kind: ErrorKind = 'bad_request'): void {
  const failure = request.validationError;
  if (!failure) return;
  const error = validationError((failure.validation ?? []) as ErrorObject[], failure.validationContext);
  throw error.kind === kind ? error : new AppError(kind, error.message, error.fields);
}
