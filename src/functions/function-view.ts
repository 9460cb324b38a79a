// What the merchant's routes (C11.2) and the developer's run routes (C11.5, C11.6) show.
import { Type } from 'typebox';
import { Id, nullable, StringEnum, Timestamp } from '../http/schemas.js';
import type { StoreFunctionRow } from './functions.repo.js';
import { RUN_STATUSES, type RunRow } from './function-runs.repo.js';

const JsonObject = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });

export const StoreFunctionSchema = Type.Object({
  functionId: Id('this function on this store'),
  appId: Id(),
  appHandle: Type.String(),
  handle: Type.String({ description: "the function's handle in its app's manifest" }),
  target: Type.String({ description: 'one of the targets of C11.3' }),
  title: nullable(Type.String()),
  active: Type.Boolean(),
  configuration: JsonObject("the merchant's configuration, or else the manifest's"),
  activatedAt: nullable(Timestamp('when it was last activated: active functions of a target run in this order')),
});

export function storeFunctionView(row: StoreFunctionRow) {
  return {
    functionId: row.id,
    appId: row.app_id,
    appHandle: row.app_handle,
    handle: row.handle,
    target: row.target,
    title: row.title,
    active: row.active,
    configuration: row.configuration,
    activatedAt: row.activated_at?.toISOString() ?? null,
  };
}

const runFields = {
  runId: Id(),
  appId: Id(),
  storeId: Id(),
  functionId: Id(),
  functionHandle: Type.String(),
  target: Type.String(),
  status: StringEnum(RUN_STATUSES),
  errorType: nullable(Type.String({ description: 'InputSizeLimitExceededError, RuntimeError, InvalidOutputError, OutputTooLargeError or TimeoutError (C11.4); null on success' })),
  errorMessage: nullable(Type.String()),
  inputBytes: Type.Integer(),
  outputBytes: Type.Integer(),
  durationMs: Type.Number(),
  checkoutToken: nullable(Type.String({ description: 'the checkout the run was for' })),
  createdAt: Timestamp(),
};

/** A log line (C11.6 logs): the record without its input and output. */
export const RunLogSchema = Type.Object(runFields);

/** A whole record (C11.6 runs). Input and output are null once erased for a redacted customer (C9). */
export const RunSchema = Type.Object({
  ...runFields,
  input: Type.Unknown({ description: 'what the function was given: { checkout, shop, ... } (C11.3)' }),
  output: Type.Unknown({ description: 'what it returned; null when the run failed' }),
});

export function runLogView(row: RunRow, openToken: (sealed: string) => string) {
  return {
    runId: row.id,
    appId: row.app_id,
    storeId: row.store_id,
    functionId: row.function_id,
    functionHandle: row.function_handle,
    target: row.target,
    status: row.status,
    errorType: row.error_type,
    errorMessage: row.error_message,
    inputBytes: row.input_bytes,
    outputBytes: row.output_bytes,
    durationMs: row.duration_ms,
    checkoutToken: row.checkout_token_enc ? openToken(row.checkout_token_enc) : null,
    createdAt: row.created_at.toISOString(),
  };
}

export function runView(row: RunRow, openToken: (sealed: string) => string) {
  const log = runLogView(row, openToken);
  return { ...log, input: withToken(row.input, log.checkoutToken), output: row.output ?? null };
}

/** The stored input holds no token (see function-runs.repo.ts): put it back where the checkout showed it. */
function withToken(input: unknown, token: string | null): unknown {
  if (input === null || input === undefined) return null;
  const checkout = (input as { checkout?: unknown }).checkout;
  if (token === null || checkout === null || typeof checkout !== 'object') return input;
  return { ...(input as object), checkout: { token, ...(checkout as object) } };
}

/** The input as stored: the checkout without its token (a bearer secret). */
export function withoutToken(input: unknown): unknown {
  const checkout = (input as { checkout?: unknown } | null)?.checkout;
  if (checkout === null || typeof checkout !== 'object') return input;
  const { token: _token, ...rest } = checkout as Record<string, unknown>;
  return { ...(input as object), checkout: rest };
}

/**
 * `JSON.stringify(withoutToken(input))`, given the input's own JSON text. A checkout's input starts
 * with its checkout and the checkout with its token (checkoutView), so the stored text is the same
 * text with the token's field cut out, and a quote does not serialise its input twice. Any other
 * shape is serialised again.
 */
export function storedInputText(input: unknown, inputJson: string): string {
  const token = (input as { checkout?: { token?: unknown } | null } | null)?.checkout?.token;
  if (typeof token === 'string') {
    const lead = `{"checkout":{"token":${JSON.stringify(token)},`;
    if (inputJson.startsWith(lead)) return `{"checkout":{${inputJson.slice(lead.length)}`;
  }
  return JSON.stringify(withoutToken(input));
}
