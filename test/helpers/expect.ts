// The response shapes of app-api.md (Errors, Body shapes), checked the same way in every test.
import { expect } from 'vitest';
import type { Harness } from './harness.js';

export type Res = Awaited<ReturnType<Harness['req']>>;
type JsonRes = { statusCode: number; body?: string; json(): any };

/**
 * Envelope error (Body shapes 2): `status`, `state` = `error`, a non-empty `message`, `data` = null.
 * `message`: text the message contains, or a pattern it matches. Returns the body.
 */
export function expectEnvelopeError(res: JsonRes, status: number, message?: string | RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(body).toEqual({ status, state: 'error', message: expect.any(String), data: null, count: null, pagination: null });
  expect(body.message.length).toBeGreaterThan(0);
  if (typeof message === 'string') expect(body.message).toContain(message);
  else if (message) expect(body.message).toMatch(message);
  return body;
}

/**
 * Errors body (Body shapes 1) `{ errors: { <key>: [<message>, ...] } }`: only `errors`, each key a
 * non-empty list of strings, and `key` (`base` for general errors) among them. Returns `errors`.
 */
export function expectErrorsBody(res: JsonRes, status: number, key = 'base') {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['errors']);
  expect(Object.keys(body.errors).length).toBeGreaterThan(0);
  for (const messages of Object.values(body.errors)) {
    expect(Array.isArray(messages)).toBe(true);
    expect((messages as unknown[]).length).toBeGreaterThan(0);
    for (const m of messages as unknown[]) expect(typeof m).toBe('string');
  }
  expect(body.errors[key]?.[0], JSON.stringify(body)).toEqual(expect.any(String));
  return body.errors as Record<string, string[]>;
}

/** The App API's headers: its version, and the rate-limit headers unless `rated` is false. */
export function expectApiHeaders(res: Res, { rated = true } = {}) {
  expect(res.headers['x-svc-api-version']).toBe('2026-06');
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    if (rated) expect(res.headers[name], name).toEqual(expect.any(String));
    else expect(res.headers[name], name).toBeUndefined();
  }
}
