// app-api.md Conventions: "Requests carry `Content-Type: application/json`". A client that sets the
// header on every request sends it on a DELETE, a body-less fulfillment (the whole order) or a
// cancel too, with an empty body; Fastify refuses an empty JSON body, and those were a 400 "The
// request body is empty" that the same request without the header did not get (found in review).
// The class is swept over every operation of the reference: an empty body under that header is
// no body at all (src/http/input-guard.ts), so whatever refuses one refuses the other alike, and
// the reference marks a request body optional exactly where no body is accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { makeKnown, type Known } from './fixtures/fuzz-seeds.js';
import { uuidv7 } from '../src/ids.js';

interface Operation {
  method: string;
  path: string;
  security: string | null;
  /** The reference's `requestBody.required` (undefined: no request body documented). */
  bodyRequired: boolean | undefined;
}

let h: Harness;
let known: Known;
let operations: Operation[];

beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
  known = await makeKnown(h);
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  operations = Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.entries<any>(item)
    .filter(([method]) => method !== 'get')
    .map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      security: op.security?.[0] ? Object.keys(op.security[0])[0] : null,
      bodyRequired: op.requestBody ? op.requestBody.required !== false : undefined,
    })));
}, 120_000);
afterAll(() => h?.close());

function tokenFor(op: Operation): string | undefined {
  if (!op.security) return undefined;
  if (op.security === 'accessToken') return known.accessToken;
  if (op.path.startsWith('/apps/admin/')) return known.operatorToken;
  if (op.path.startsWith('/apps/developer/')) return known.developerToken;
  return known.merchantToken;
}

/** Ids no resource has (so nothing is changed by a request that gets past its body), the store's slug. */
const urlOf = (op: Operation) => op.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'storeURL' ? known.slug : name === 'job' ? 'no-such-job' : uuidv7()));

async function send(op: Operation, url: string, emptyJson: boolean) {
  const headers: Record<string, string> = {};
  const token = tokenFor(op);
  if (token) headers.authorization = `Bearer ${token}`;
  if (emptyJson) headers['content-type'] = 'application/json';
  const res = await h.app.inject({ method: op.method as any, url, headers, payload: emptyJson ? '' : undefined });
  return { status: res.statusCode, body: res.body };
}

/** Operations whose success changes the fixtures the others use: run last. */
const LAST = /shop-redact|clock\/advance|rotate-secret/;

describe('an empty body under Content-Type: application/json is no body (app-api.md Conventions)', () => {
  it('every operation answers it as it answers the same request with no body and no media type', async () => {
    expect(operations.length).toBeGreaterThan(60);
    const ordered = [...operations.filter((op) => !LAST.test(op.path)), ...operations.filter((op) => LAST.test(op.path))];
    const differ: string[] = [];
    let refusedAlike = 0;
    for (const op of ordered) {
      const url = urlOf(op);
      const withHeader = await send(op, url, true);
      const without = await send(op, url, false);
      const where = `${op.method} ${op.path}`;
      expect(withHeader.status, `${where}: ${withHeader.body}`).toBeLessThan(500);
      expect(withHeader.body, where).not.toMatch(/Malformed JSON|body is empty/);
      // A refusal changes nothing, so the second request meets the same state: the same answer
      // (the request id aside). One that succeeded may have changed what the second one meets.
      if (withHeader.status >= 400) {
        const strip = (body: string) => body.replace(/"(request_?[iI]d)":"[^"]*"/g, '"$1":""');
        if (withHeader.status !== without.status || strip(withHeader.body) !== strip(without.body)) {
          differ.push(`${where}: ${withHeader.status} ${withHeader.body.slice(0, 160)} | without: ${without.status} ${without.body.slice(0, 160)}`);
        } else refusedAlike++;
      }
    }
    expect(differ, differ.join('\n')).toEqual([]);
    expect(refusedAlike, 'most operations refuse a missing body or id: the comparison ran').toBeGreaterThan(40);
  }, 120_000);

  it('the reference marks a request body optional exactly where the route takes none', async () => {
    const wrong: string[] = [];
    // The payment processor's events are refused without their signature header, body or not.
    const checked = operations.filter((o) => o.bodyRequired !== undefined && !LAST.test(o.path) && o.path !== '/payments/stripe/webhook');
    for (const op of checked) {
      const res = await send(op, urlOf(op), false);
      // A body the route requires is checked before any id is looked up: its absence is a 400 or
      // 422 (a missing field). A route that takes no body goes on to its ids, none of which exists.
      const refused = res.status === 400 || res.status === 422;
      if (refused !== op.bodyRequired) wrong.push(`${op.method} ${op.path}: documented ${op.bodyRequired ? 'required' : 'optional'}, no body -> ${res.status} ${res.body.slice(0, 160)}`);
    }
    expect(checked.filter((op) => !op.bodyRequired).length, 'optional bodies were checked').toBeGreaterThanOrEqual(7);
    expect(wrong, wrong.join('\n')).toEqual([]);
  }, 120_000);
});
