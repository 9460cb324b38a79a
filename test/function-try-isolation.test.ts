// Developers' trying and replaying (C11.7) never take capacity from stores' checkouts (C11.4).
// Review found that both routes ran in the checkouts' own pool of worker threads, with no bound:
// parallel loops of a runaway expression kept that pool busy, every store's checkout functions
// failed as saturated, and C11.4 ("a failed run's operations are dropped and the checkout goes on")
// let a checkout refused by its validation function complete. Here with real worker threads and
// real HTTP on loopback: the flood runs in the developers' own pool, each app's excess is refused
// (429, Retry-After), and a store's validation function still refuses the completion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, listenOnLoopback, type Harness } from './helpers/harness.js';
import { VALIDATION_TARGET as VALIDATION } from '../src/checkout/checkout-functions.js';
import { createTestApp, signupPartner, storeWithApp } from './helpers/actors.js';
import { insertSimpleZone } from './helpers/checkout.js';
import { address, insertProduct, uniq } from './helpers/orders.js';
import { insertRuns } from '../src/functions/function-runs.repo.js';
import { uuidv7 } from '../src/ids.js';
import { readdirSync, readFileSync } from 'node:fs';
import { DEVELOPER_POOL_RUNS, DEVELOPER_RUNS_IN_FLIGHT, DEVELOPER_RUNS_PER_MINUTE } from '../src/functions/developer-runs.js';

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createHarness();
  base = await listenOnLoopback(h);
});
afterAll(() => h?.close());

interface HttpRes {
  status: number;
  headers: Headers;
  body: any;
}

async function http(method: string, path: string, opts: { token?: string; body?: unknown } = {}): Promise<HttpRes> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the failure message
  }
  return { status: res.status, headers: res.headers, body };
}

/** Always over the limit (1 s in tests, C11.4's 50 ms in production): 400^3 comprehension steps. */
const RUNAWAY = 'input.big.all(a, input.big.all(b, input.big.all(c, a + b + c >= 0.0)))';
const RUNAWAY_INPUT = { big: Array.from({ length: 400 }, (_, i) => i) };
const tryRunaway = (d: { appId: string; token: string }) =>
  http('POST', `/apps/developer/${d.appId}/functions/run`, { token: d.token, body: { target: VALIDATION, expression: RUNAWAY, input: RUNAWAY_INPUT } });
async function developer() {
  const partner = await signupPartner(h);
  const app = await createTestApp(h, partner.token);
  return { appId: app.appId, token: partner.token };
}
const AT_MOST_FIVE = '{"operations": [{"validationAdd": {"errors": input.checkout.line_items.filter(l, l.quantity > 5.0).map(l, {"message": "At most 5 of " + l.title, "target": l.id})}}]}';

/** `loops` parallel loops per developer, each trying RUNAWAY again as soon as it is answered (or 20 ms after a refusal), until stopped. */
function flood(developers: { appId: string; token: string }[], loops: number) {
  let stopped = false;
  const answers: HttpRes[] = [];
  const loop = async (d: { appId: string; token: string }) => {
    while (!stopped) {
      const res = await http('POST', `/apps/developer/${d.appId}/functions/run`, { token: d.token, body: { target: VALIDATION, expression: RUNAWAY, input: RUNAWAY_INPUT } });
      answers.push(res);
      if (res.status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
  };
  const running = Promise.all(developers.flatMap((d) => Array.from({ length: loops }, () => loop(d))));
  return {
    answers,
    async stop() {
      stopped = true;
      await running;
      return answers;
    },
  };
}

describe('C11.7 trying and replaying never take capacity from checkouts (C11.4)', () => {
  it("while developers flood the try route with a runaway expression, a store's validation function still refuses a completion (422)", async () => {
    const s = await storeWithApp(h, {
      scopes: ['read_products', 'write_products', 'read_orders', 'write_orders'], tier: 'enterprise',
      extensions: { functions: [{ handle: 'at-most-five', target: VALIDATION, expression: AT_MOST_FIVE }] },
    });
    const product = await insertProduct(h, s.merchant.storeId, { title: 'Mug', price: 1000, stock: 100 });
    const zone = `zone-${await insertSimpleZone(h, s.merchant.storeId, { name: 'Standard', countries: ['GB'], price: 500 })}`;
    const developers = await Promise.all([0, 1].map(developer));
    const checkoutRunsBefore = h.deps.functions.stats();
    const developerRunsBefore = h.deps.developerFunctions.stats();

    const f = flood(developers, 8);
    // Let the flood take whatever it can take before the buyer comes.
    await new Promise((r) => setTimeout(r, 1500));
    const checkouts = `/storefront/${s.merchant.slug}/checkouts`;
    const created = await http('POST', checkouts, { body: { email: `buyer-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 6 }], shipping_address: address } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const checkout = created.body.data.checkout;
    expect(checkout.validation_errors).toEqual([{ message: 'At most 5 of Mug', target: checkout.line_items[0].id }]);
    const changed = await http('PATCH', `${checkouts}/${checkout.token}`, { body: { shipping_rate: { handle: zone }, payment_method: 'card' } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const completed = await http('POST', `${checkouts}/${checkout.token}/complete`);
    const answers = await f.stop();

    expect(completed.status, JSON.stringify(completed.body)).toBe(422);
    expect(completed.body).toMatchObject({ status: 422, state: 'error', data: null });
    expect(completed.body.message).toContain('At most 5 of Mug');
    // The checkout's pool ran the checkout's runs and nothing else: none saturated, none timed out.
    const after = h.deps.functions.stats();
    expect(after.saturated - checkoutRunsBefore.saturated).toBe(0);
    expect(after.timeouts - checkoutRunsBefore.timeouts).toBe(0);
    // The flood ran in the developers' pool.
    expect(h.deps.developerFunctions.stats().timeouts).toBeGreaterThan(developerRunsBefore.timeouts);

    // The flood: runs the route let through failed on their own deadline; the excess was refused
    // in the route's documented shape, with Retry-After.
    const statuses = new Set(answers.map((a) => a.status));
    for (const status of statuses) expect([200, 429, 503], JSON.stringify(answers.find((a) => a.status === status)?.body)).toContain(status);
    const ran = answers.filter((a) => a.status === 200);
    expect(ran.length).toBeGreaterThan(0);
    for (const a of ran) expect(a.body.data).toMatchObject({ status: 'failure', errorType: 'TimeoutError' });
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(a.body).toEqual({ status: 429, state: 'error', message: expect.stringMatching(/function runs/), data: null, count: null, pagination: null });
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  }, 60_000);

  it(`an app has at most ${DEVELOPER_RUNS_IN_FLIGHT} runs at once: one more is refused at once (429, Retry-After), and its place is free again once a run ends`, async () => {
    const d = await developer();
    const answers = await Promise.all(Array.from({ length: DEVELOPER_RUNS_IN_FLIGHT + 1 }, () => tryRunaway(d)));
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(DEVELOPER_RUNS_IN_FLIGHT).fill(200), 429]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.body).toEqual({ status: 429, state: 'error', message: `At most ${DEVELOPER_RUNS_IN_FLIGHT} function runs (trying and replaying) at once per app: wait for one to finish`, data: null, count: null, pagination: null });
    expect(refused.headers.get('retry-after')).toBe('1');
    // The runs ended, so the app's places are free: never a 429 now. The runaways cost the pool's
    // one worker, replaced (C11.4); until its replacement has loaded (seconds on a loaded machine,
    // with other suites beside this one), a run is answered "not run: no worker was free", so the
    // try is repeated until the new worker takes it.
    let again: HttpRes;
    for (let tries = 0; ; tries++) {
      again = await http('POST', `/apps/developer/${d.appId}/functions/run`, { token: d.token, body: { target: VALIDATION, expression: '{"operations": []}', input: {} } });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      const notRun = again.body.data.status === 'failure' && /^not run: no worker was free/.test(again.body.data.errorMessage);
      if (!notRun || tries >= 50) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(again.body.data).toMatchObject({ status: 'success', output: { operations: [] } });
  }, 30_000);

  it(`the developers' pool holds ${DEVELOPER_POOL_RUNS} runs of all apps: one more is 503 with Retry-After`, async () => {
    const apps = await Promise.all(Array.from({ length: Math.ceil((DEVELOPER_POOL_RUNS + 1) / DEVELOPER_RUNS_IN_FLIGHT) }, developer));
    const answers = await Promise.all(apps.flatMap((d) => Array.from({ length: DEVELOPER_RUNS_IN_FLIGHT }, () => tryRunaway(d))));
    const busy = answers.filter((a) => a.status === 503);
    expect(busy.length).toBe(apps.length * DEVELOPER_RUNS_IN_FLIGHT - DEVELOPER_POOL_RUNS);
    for (const a of busy) {
      expect(a.body).toEqual({ status: 503, state: 'error', message: "Developers' function runs are busy; try again shortly", data: null, count: null, pagination: null });
      expect(a.headers.get('retry-after')).toBe('1');
    }
    // The others ran, or waited for the worker past their time: a 200 with a TimeoutError either way.
    for (const a of answers.filter((x) => x.status !== 503)) expect(a.body.data).toMatchObject({ status: 'failure', errorType: 'TimeoutError' });
  }, 60_000);

  it(`an app has at most ${DEVELOPER_RUNS_PER_MINUTE} runs a minute, trying and replaying together: then 429 with Retry-After until the minute has passed`, async () => {
    const d = await developer();
    const cheap = { target: VALIDATION, expression: '{"operations": []}', input: {} };
    for (let i = 0; i < DEVELOPER_RUNS_PER_MINUTE; i++) {
      const res = await h.req('POST', `/apps/developer/${d.appId}/functions/run`, { token: d.token, body: cheap });
      expect(res.statusCode, res.body).toBe(200);
    }
    const refused = await h.req('POST', `/apps/developer/${d.appId}/functions/run`, { token: d.token, body: cheap });
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.json().message).toBe(`At most ${DEVELOPER_RUNS_PER_MINUTE} function runs (trying and replaying) a minute per app`);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another app's minute is its own.
    const other = await developer();
    expect((await h.req('POST', `/apps/developer/${other.appId}/functions/run`, { token: other.token, body: cheap })).statusCode).toBe(200);
    await h.advance(61);
    expect((await h.req('POST', `/apps/developer/${d.appId}/functions/run`, { token: d.token, body: cheap })).statusCode).toBe(200);
  }, 60_000);

  it("a replay runs in the developers' pool, not the checkouts', at a lower CPU priority", async () => {
    const s = await storeWithApp(h, {
      scopes: ['read_products', 'write_products', 'read_orders', 'write_orders'], tier: 'enterprise',
      extensions: { functions: [{ handle: 'slow', target: VALIDATION, expression: RUNAWAY }] },
    });
    const [f] = (await h.req('GET', '/functions', { token: s.merchant.token })).json().data.functions;
    const runId = uuidv7();
    await insertRuns(h.deps.db, [{
      id: runId, appId: s.app.appId, storeId: s.merchant.storeId, functionId: f.functionId, functionHandle: 'slow', target: VALIDATION, status: 'failure',
      errorType: 'TimeoutError', errorMessage: 'stopped', input: RUNAWAY_INPUT, inputBytes: 10, output: null, outputBytes: 0, durationMs: 50, checkoutId: null,
      checkoutTokenSealed: null, createdAt: new Date(h.deps.clock.nowMs()),
    }]);
    const checkoutPool = h.deps.functions.stats();
    const developerPool = h.deps.developerFunctions.stats();
    const replay = await http('POST', `/apps/developer/${s.app.appId}/functions/slow/runs/${runId}/replay`, { token: s.partner.token, body: {} });
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    expect(replay.body.data).toMatchObject({ status: 'failure', errorType: 'TimeoutError' });
    expect(h.deps.functions.stats().runs).toBe(checkoutPool.runs);
    expect(h.deps.developerFunctions.stats().runs).toBe(developerPool.runs + 1);
    expect(h.deps.developerFunctions.stats().threads).toBe(1);
    if (process.platform === 'linux') {
      // The developers' worker thread (and its replacement, loaded at once) runs at nice 10 (field
      // 19 of a thread's stat line); the service's own thread stays at the process's.
      const niceOf = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[16]);
      // Looked for while a developer's run holds the worker: an idle one above the pool's minimum
      // may be gone (piscina ends idle workers), so an idle pool proves nothing either way.
      const lowered = () => readdirSync('/proc/self/task').filter((tid) => {
        try {
          return niceOf(tid) === 10;
        } catch {
          return false; // a thread that ended meanwhile
        }
      }).length;
      let settled = false;
      const running = h.deps.developerFunctions.run({ target: VALIDATION, expression: RUNAWAY, input: RUNAWAY_INPUT, configuration: {} }).finally(() => { settled = true; });
      let seen = 0;
      while (!settled && seen === 0) {
        seen = lowered();
        await new Promise((r) => setTimeout(r, 20));
      }
      await running;
      expect(seen).toBeGreaterThanOrEqual(1);
      expect(niceOf(String(process.pid))).toBe(0);
    }
  }, 30_000);
});
