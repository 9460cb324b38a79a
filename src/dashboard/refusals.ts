// A page's form calls the same services the API routes do, and shows their refusals on the form
// instead of an error page. Each form names which refusals are about what was typed (a bad value, a
// taken handle, a rate test's own minute); the rest (another user's resource, a failure) go on to
// the dashboard's error handler (dashboard.ts), which renders the error page.
import type { FastifyReply } from 'fastify';
import { AppError, type ErrorKind } from '../http/errors.js';

/**
 * The service's refusal, when it is one of `kinds`, for the form to show with `refusal.status`; its
 * `Retry-After` is passed on as the API passes it. Any other error is rethrown.
 */
export function formRefusal(err: unknown, reply: FastifyReply, kinds: readonly ErrorKind[]): AppError {
  if (!(err instanceof AppError) || !kinds.includes(err.kind)) throw err;
  if (err.retryAfterSeconds !== undefined) reply.header('Retry-After', err.retryAfterSeconds);
  return err;
}

/**
 * The refusal's first problem with each field, by field (`{ zip: "is too long" }`, or with
 * `named`, `{ zip: "zip is too long" }` for a form that shows it away from the field); a refusal
 * naming no field is the whole form's (`_form`), in its message.
 */
export function errorsByField(refusal: AppError, options: { named?: boolean } = {}): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const [field, problems] of Object.entries(refusal.fields ?? {})) {
    if (problems[0]) errors[field] = options.named ? `${field} ${problems[0]}` : problems[0];
  }
  if (!Object.keys(errors).length) errors._form = refusal.message;
  return errors;
}
