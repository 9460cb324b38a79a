// Declarative functions (C11): the manifest's `extensions.functions` (C11.1), activation per store
// (C11.2: install, uninstall, the 26th, order, configuration) and the developer's logs and runs
// (C11.5, C11.6), with retention and erasure. Runs at a checkout are recorded by the checkout
// (test/checkout-functions.test.ts); here records are written through the repository.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { DELIVERY_TARGET as DELIVERY, PAYMENT_TARGET as PAYMENT, VALIDATION_TARGET as VALIDATION } from '../src/checkout/checkout-functions.js';
import { createTestApp, installApp, operatorToken, signupMerchant, signupPartner, unique, type Merchant, type TestApp } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { insertRuns, type NewRun } from '../src/functions/function-runs.repo.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());


const fn = (handle: string, target = DELIVERY, extra: Record<string, unknown> = {}) => ({
  handle,
  target,
  expression: '{"operations": []}',
  ...extra,
});

async function appWithFunctions(functions: unknown[], partner?: { token: string }) {
  const p = partner ?? (await signupPartner(h));
  const app = await createTestApp(h, p.token, { extensions: { functions } });
  return { partner: p, app };
}

async function storeFunctions(merchant: Merchant) {
  const res = await h.req('GET', '/functions', { token: merchant.token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.functions as any[];
}

const ofApp = (list: any[], app: TestApp) => list.filter((f) => f.appId === app.appId);

describe('C11.1 the manifest declares functions', () => {
  it('an app is created with its functions, shown as declared (title null and configuration {} by default)', async () => {
    const { app } = await appWithFunctions([fn('hide-express', DELIVERY, { title: 'Hide express', configuration: { country: 'US' } }), fn('no-cod', PAYMENT)]);
    const res = await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: app.developerToken });
    expect(res.json().data.app.extensions.functions).toEqual([
      { handle: 'hide-express', target: DELIVERY, title: 'Hide express', expression: '{"operations": []}', configuration: { country: 'US' } },
      { handle: 'no-cod', target: PAYMENT, title: null, expression: '{"operations": []}', configuration: {} },
    ]);
  });

  it.each([
    ['an unknown target', [fn('a', 'cart.everything.run')], /\(a\): target must be one of/],
    ['a handle that is not a slug', [fn('Not A Slug')], /handle must be lowercase/],
    ['a duplicate handle', [fn('twice'), fn('twice', PAYMENT)], /\(twice\): handle is used by another function/],
    ['an expression that does not parse', [fn('broken', DELIVERY, { expression: '{"operations": [' })], /\(broken\): expression does not parse/],
    ['an expression over 10,000 characters', [fn('long', DELIVERY, { expression: `"${'x'.repeat(10_001)}"` })], /\(long\): expression is too long/],
    ['a configuration over 10 KB', [fn('big', DELIVERY, { configuration: { blob: 'x'.repeat(11_000) } })], /\(big\): configuration is too large/],
    ['a configuration that is not an object', [fn('list', DELIVERY, { configuration: [1, 2] })], /\(list\): configuration must be a JSON object/],
    ['functions that is not an array', { handle: 'x' }, /extensions.functions must be an array/],
  ])('400 naming the function for %s, and no app is created', async (_label, functions, message) => {
    const p = await signupPartner(h);
    const res = await h.req('POST', '/apps/developer/apps', {
      token: p.token,
      body: { name: `App ${unique()}`, appUrl: 'https://app.example.com', scopes: ['read_products'], extensions: { functions } },
    });
    expectEnvelopeError(res, 400, message);
    const list = await h.req('GET', '/apps/developer/apps', { token: p.token });
    expect(list.json().data.apps).toEqual([]);
  });

  it('an update checks the functions the same way and changes them on every store at once', async () => {
    const { app } = await appWithFunctions([fn('one'), fn('two')]);
    const merchants = [await signupMerchant(h), await signupMerchant(h)];
    for (const m of merchants) await installApp(h, m, app);

    const bad = await h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: app.developerToken, body: { extensions: { functions: [fn('one', 'nope')] } } });
    expectEnvelopeError(bad, 400, /\(one\): target must be one of/);

    const ok = await h.req('PATCH', `/apps/developer/apps/${app.appId}`, {
      token: app.developerToken,
      body: { extensions: { functions: [fn('two', DELIVERY, { title: 'Two' }), fn('three', VALIDATION)] } },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    for (const m of merchants) {
      const list = ofApp(await storeFunctions(m), app);
      expect(list.map((f) => [f.handle, f.title, f.active])).toEqual([['two', 'Two', true], ['three', null, true]]);
    }
  });
});

describe('C11.2 activation', () => {
  it('installing activates the functions in declared order; GET /functions shows each with its app', async () => {
    const { app } = await appWithFunctions([fn('first'), fn('second', PAYMENT, { configuration: { max: 3 } }), fn('third')]);
    const merchant = await signupMerchant(h);
    expect(ofApp(await storeFunctions(merchant), app)).toEqual([]);
    await installApp(h, merchant, app);
    const list = ofApp(await storeFunctions(merchant), app);
    expect(list.map((f) => f.handle)).toEqual(['first', 'second', 'third']);
    expect(list[1]).toEqual({
      functionId: expect.any(String), appId: app.appId, appHandle: app.handle, handle: 'second', target: PAYMENT, title: null,
      active: true, configuration: { max: 3 }, activatedAt: expect.any(String),
    });
  });

  it('uninstalling deactivates them (still listed); reinstalling activates them again, at the end of the order', async () => {
    const merchant = await signupMerchant(h);
    const { app: a } = await appWithFunctions([fn('a1'), fn('a2')]);
    const { app: b } = await appWithFunctions([fn('b1')]);
    const installedA = await installApp(h, merchant, a);
    await installApp(h, merchant, b);
    expect((await storeFunctions(merchant)).map((f) => f.handle)).toEqual(['a1', 'a2', 'b1']);

    const removed = await h.req('DELETE', `/apps/installations/${installedA.installationId}`, { token: merchant.token });
    expect(removed.statusCode, removed.body).toBe(200);
    expect((await storeFunctions(merchant)).map((f) => [f.handle, f.active])).toEqual([['b1', true], ['a1', false], ['a2', false]]);

    await installApp(h, merchant, a);
    expect((await storeFunctions(merchant)).map((f) => [f.handle, f.active])).toEqual([['b1', true], ['a1', true], ['a2', true]]);
  });

  it('at most 25 active functions per target: the 26th stays inactive, activating it is 409 until one makes room', async () => {
    const merchant = await signupMerchant(h);
    const many = Array.from({ length: 26 }, (_, i) => fn(`d${i + 1}`));
    const { app } = await appWithFunctions([...many, fn('pay', PAYMENT)]);
    await installApp(h, merchant, app);
    const list = await storeFunctions(merchant);
    expect(list.filter((f) => f.active && f.target === DELIVERY)).toHaveLength(25);
    const last = list.find((f) => f.handle === 'd26');
    expect(last.active).toBe(false);
    expect(list.find((f) => f.handle === 'pay').active).toBe(true);

    expectEnvelopeError(await h.req('PATCH', `/functions/${last.functionId}`, { token: merchant.token, body: { active: true } }), 409, /25 active functions/);
    const first = list.find((f) => f.handle === 'd1');
    const off = await h.req('PATCH', `/functions/${first.functionId}`, { token: merchant.token, body: { active: false } });
    expect(off.json().data.function.active).toBe(false);
    const on = await h.req('PATCH', `/functions/${last.functionId}`, { token: merchant.token, body: { active: true } });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json().data.function.active).toBe(true);
    // Activated last, it runs last.
    const active = (await storeFunctions(merchant)).filter((f) => f.active && f.target === DELIVERY);
    expect(active.at(-1).handle).toBe('d26');
    expect(active.map((f) => f.handle)).not.toContain('d1');
  });

  it("the merchant's configuration replaces the manifest's; null gives the manifest's back; over 10 KB is 400", async () => {
    const merchant = await signupMerchant(h);
    const { app } = await appWithFunctions([fn('conf', DELIVERY, { configuration: { from: 'manifest' } })]);
    await installApp(h, merchant, app);
    const [f] = ofApp(await storeFunctions(merchant), app);
    const set = await h.req('PATCH', `/functions/${f.functionId}`, { token: merchant.token, body: { configuration: { from: 'merchant' } } });
    expect(set.json().data.function.configuration).toEqual({ from: 'merchant' });
    expectEnvelopeError(await h.req('PATCH', `/functions/${f.functionId}`, { token: merchant.token, body: { configuration: { x: 'y'.repeat(11_000) } } }), 400, /configuration/);
    expectEnvelopeError(await h.req('PATCH', `/functions/${f.functionId}`, { token: merchant.token, body: { configuration: 'text' } }), 400, /configuration/);
    const reset = await h.req('PATCH', `/functions/${f.functionId}`, { token: merchant.token, body: { configuration: null } });
    expect(reset.json().data.function.configuration).toEqual({ from: 'manifest' });
  });

  it("another store's function is 404, and activating one whose app is uninstalled is 409", async () => {
    const [m1, m2] = [await signupMerchant(h), await signupMerchant(h)];
    const { app } = await appWithFunctions([fn('mine')]);
    const installed = await installApp(h, m1, app);
    const [f] = ofApp(await storeFunctions(m1), app);
    expectEnvelopeError(await h.req('PATCH', `/functions/${f.functionId}`, { token: m2.token, body: { active: false } }), 404);
    expectEnvelopeError(await h.req('PATCH', '/functions/not-a-uuid', { token: m2.token, body: { active: false } }), 404);
    expect(ofApp(await storeFunctions(m2), app)).toEqual([]);
    await h.req('DELETE', `/apps/installations/${installed.installationId}`, { token: m1.token });
    expectEnvelopeError(await h.req('PATCH', `/functions/${f.functionId}`, { token: m1.token, body: { active: true } }), 409, /not installed/);
  });

  it('the operator names the store with storeId', async () => {
    const ops = await operatorToken(h);
    const merchant = await signupMerchant(h);
    const { app } = await appWithFunctions([fn('seen')]);
    await installApp(h, merchant, app);
    const res = await h.req('GET', `/functions?storeId=${merchant.storeId}`, { token: ops });
    expect(res.json().data.functions.map((f: any) => f.handle)).toContain('seen');
  });
});

describe('C11.5, C11.6 run records: logs and runs', () => {
  async function setup() {
    const merchant = await signupMerchant(h);
    const { app, partner } = await appWithFunctions([fn('alpha'), fn('beta', VALIDATION)]);
    await installApp(h, merchant, app);
    const list = ofApp(await storeFunctions(merchant), app);
    const token = `chk_${unique()}`;
    const run = (handle: string, i: number, extra: Partial<NewRun> = {}): NewRun => ({
      id: uuidv7(), appId: app.appId, storeId: merchant.storeId, functionId: list.find((f) => f.handle === handle).functionId,
      functionHandle: handle, target: list.find((f) => f.handle === handle).target, status: 'success', errorType: null, errorMessage: null,
      input: { checkout: { email: 'buyer@example.com', line_items: [] }, shop: { id: merchant.storeId } }, inputBytes: 100 + i,
      output: { operations: [] }, outputBytes: 17, durationMs: 0.5, checkoutId: null,
      checkoutTokenSealed: h.deps.secrets.seal(token), createdAt: new Date(h.deps.clock.nowMs() - (10 - i) * 1000), ...extra,
    });
    await insertRuns(h.deps.db, [
      run('alpha', 1), run('alpha', 2, { status: 'failure', errorType: 'RuntimeError', errorMessage: 'no such key: x', output: null, outputBytes: 0 }),
      run('alpha', 3), run('beta', 4),
    ]);
    return { merchant, app, partner, token };
  }

  it('logs: newest first, without input and output, paged with count; `all` covers every function; status filters', async () => {
    const { app, token } = await setup();
    const base = `/apps/developer/${app.appId}/functions`;
    const res = await h.req('GET', `${base}/alpha/logs?limit=2`, { token: app.developerToken });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.count).toBe(3);
    expect(body.pagination).toMatchObject({ page: 1, limit: 2, totalResult: 3, totalPages: 2 });
    expect(body.data.logs.map((l: any) => l.inputBytes)).toEqual([103, 102]);
    expect(body.data.logs[1]).toEqual({
      runId: expect.any(String), appId: app.appId, storeId: expect.any(String), functionId: expect.any(String), functionHandle: 'alpha',
      target: DELIVERY, status: 'failure', errorType: 'RuntimeError', errorMessage: 'no such key: x', inputBytes: 102, outputBytes: 0,
      durationMs: 0.5, checkoutToken: token, createdAt: expect.any(String),
    });
    const all = await h.req('GET', `${base}/all/logs`, { token: app.developerToken });
    expect(all.json().data.logs.map((l: any) => l.functionHandle)).toEqual(['beta', 'alpha', 'alpha', 'alpha']);
    const failures = await h.req('GET', `${base}/all/logs?status=failure`, { token: app.developerToken });
    expect(failures.json().data.logs.map((l: any) => l.status)).toEqual(['failure']);
    expectEnvelopeError(await h.req('GET', `${base}/alpha/logs?status=broken`, { token: app.developerToken }), 400, /status must be one of success, failure/);
  });

  it('runs: whole records with input (its checkout token in place) and output, newest first, limit', async () => {
    const { app, token } = await setup();
    const res = await h.req('GET', `/apps/developer/${app.appId}/functions/alpha/runs?limit=2`, { token: app.developerToken });
    expect(res.statusCode, res.body).toBe(200);
    const runs = res.json().data.runs;
    expect(runs).toHaveLength(2);
    expect(runs[0].input).toEqual({ checkout: { token, email: 'buyer@example.com', line_items: [] }, shop: { id: expect.any(String) } });
    expect(runs[0].output).toEqual({ operations: [] });
    expect(runs[1].output).toBeNull();
    // At rest the token is sealed and the stored input holds none.
    const { rows } = await h.db.query(
      'SELECT r.input, i.input AS shared, r.checkout_token_enc FROM function_runs r LEFT JOIN function_run_inputs i ON i.id = r.input_id WHERE r.id = $1',
      [runs[0].runId],
    );
    expect(rows[0].shared).toEqual({ checkout: { email: 'buyer@example.com', line_items: [] }, shop: { id: expect.any(String) } });
    expect(JSON.stringify(rows[0])).not.toContain(token);
  });

  it("another developer's app is 403; an unknown app or handle is 404", async () => {
    const { app } = await setup();
    const other = await signupPartner(h);
    expectEnvelopeError(await h.req('GET', `/apps/developer/${app.appId}/functions/alpha/logs`, { token: other.token }), 403);
    expectEnvelopeError(await h.req('GET', `/apps/developer/${app.appId}/functions/alpha/runs`, { token: other.token }), 403);
    expectEnvelopeError(await h.req('GET', `/apps/developer/${app.appId}/functions/nope/logs`, { token: app.developerToken }), 404);
    expectEnvelopeError(await h.req('GET', `/apps/developer/${uuidv7()}/functions/alpha/runs`, { token: app.developerToken }), 404);
  });

  it('retention deletes runs older than SVC_DELIVERY_RETENTION_DAYS with the delivery bodies', async () => {
    const { app, merchant } = await setup();
    const [f] = ofApp(await storeFunctions(merchant), app);
    const old = new Date(h.deps.clock.nowMs() - (h.deps.config.deliveryRetentionDays + 1) * 86_400_000);
    const oldId = uuidv7();
    await insertRuns(h.deps.db, [{
      id: oldId, appId: app.appId, storeId: merchant.storeId, functionId: f.functionId, functionHandle: 'alpha', target: DELIVERY, status: 'success',
      errorType: null, errorMessage: null, input: {}, inputBytes: 2, output: { operations: [] }, outputBytes: 17, durationMs: 1, checkoutId: null,
      checkoutTokenSealed: null, createdAt: old,
    }]);
    const ops = await operatorToken(h);
    const run = await h.req('POST', '/apps/admin/jobs/webhook-retention/run', { token: ops });
    expect(run.statusCode, run.body).toBe(200);
    const { rows } = await h.db.query('SELECT id FROM function_runs WHERE app_id = $1', [app.appId]);
    expect(rows.map((r: any) => r.id)).not.toContain(oldId);
    expect(rows).toHaveLength(4);
  });
});

describe('C11.7 trying and replaying', () => {
  const RUNAWAY = 'input.big.all(a, input.big.all(b, input.big.all(c, a + b + c >= 0.0)))';
  const HIDE_BY_CONFIG = '{"operations": [{"hide": {"handle": configuration.hide}}]}';

  it('runs an expression on the given input and answers its outcome with every error type of C11.4, recording nothing', async () => {
    const { app } = await appWithFunctions([fn('any')]);
    const url = `/apps/developer/${app.appId}/functions/run`;
    const ok = await h.req('POST', url, {
      token: app.developerToken,
      body: { target: DELIVERY, expression: '{"operations": input.deliveryOptions.filter(o, double(o.price) > 10.0).map(o, {"hide": {"handle": o.handle}})}', input: { deliveryOptions: [{ handle: 'a', price: '5.00' }, { handle: 'b', price: '12.50' }] } },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data).toEqual({ status: 'success', errorType: null, errorMessage: null, output: { operations: [{ hide: { handle: 'b' } }] }, durationMs: expect.any(Number) });

    const runtime = await h.req('POST', url, { token: app.developerToken, body: { target: DELIVERY, expression: 'input.missing.field', input: {} } });
    expect(runtime.json().data).toMatchObject({ status: 'failure', errorType: 'RuntimeError', output: null });
    const invalid = await h.req('POST', url, { token: app.developerToken, body: { target: DELIVERY, expression: '{"operations": [{"explode": {}}]}', input: {} } });
    expect(invalid.json().data).toMatchObject({ status: 'failure', errorType: 'InvalidOutputError' });
    const huge = await h.req('POST', url, { token: app.developerToken, body: { target: DELIVERY, expression: '{"operations": []}', input: { blob: 'x'.repeat(130 * 1024) } } });
    expect(huge.json().data).toMatchObject({ status: 'failure', errorType: 'InputSizeLimitExceededError', output: null });
    const wordy = await h.req('POST', url, {
      token: app.developerToken,
      body: { target: VALIDATION, expression: '{"operations": [{"validationAdd": {"errors": input.many.map(i, {"message": input.text, "target": "cart"})}}]}', input: { many: Array.from({ length: 30 }, (_, i) => i), text: 'y'.repeat(900) } },
    });
    expect(wordy.json().data).toMatchObject({ status: 'failure', errorType: 'OutputTooLargeError', output: null });
    const configured = await h.req('POST', url, { token: app.developerToken, body: { target: DELIVERY, expression: HIDE_BY_CONFIG, input: {}, configuration: { hide: 'x' } } });
    expect(configured.json().data.output).toEqual({ operations: [{ hide: { handle: 'x' } }] });

    expectEnvelopeError(await h.req('POST', url, { token: app.developerToken, body: { target: 'nope', expression: '1', input: {} } }), 400, /target must be one of/);
    expectEnvelopeError(await h.req('POST', url, { token: app.developerToken, body: { target: DELIVERY, expression: '{"a": ', input: {} } }), 400, /does not parse/);
    const other = await signupPartner(h);
    expectEnvelopeError(await h.req('POST', url, { token: other.token, body: { target: DELIVERY, expression: '1', input: {} } }), 403);
    // The runaway last: it costs the developers' pool its worker, and until the replacement has
    // loaded (seconds on a busy machine) a try whose expression must first be checked is "not run".
    const replaced = h.deps.developerFunctions.stats().workersReplaced;
    const slow = await h.req('POST', url, { token: app.developerToken, body: { target: VALIDATION, expression: RUNAWAY, input: { big: Array.from({ length: 200 }, (_, i) => i) } } });
    expect(slow.json().data).toMatchObject({ status: 'failure', errorType: 'TimeoutError' });
    // The next tests try again once the replacement worker has loaded.
    await expect.poll(() => {
      const stats = h.deps.developerFunctions.stats();
      return stats.workersReplaced > replaced && stats.loaded > 0;
    }, { timeout: 60_000, interval: 100 }).toBe(true);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM function_runs WHERE app_id = $1', [app.appId]);
    expect(rows[0].n).toBe(0);
  });

  it("replays a recorded run's input with the current expression, or a new one, and the store's configuration now", async () => {
    const merchant = await signupMerchant(h);
    const { app } = await appWithFunctions([fn('hider', DELIVERY, { expression: HIDE_BY_CONFIG, configuration: { hide: 'from-manifest' } })]);
    await installApp(h, merchant, app);
    const [f] = ofApp(await storeFunctions(merchant), app);
    const runId = uuidv7();
    const base = {
      appId: app.appId, storeId: merchant.storeId, functionId: f.functionId, functionHandle: 'hider', target: DELIVERY, status: 'success' as const,
      errorType: null, errorMessage: null, inputBytes: 10, output: { operations: [] }, outputBytes: 17, durationMs: 1, checkoutId: null,
      checkoutTokenSealed: null, createdAt: new Date(h.deps.clock.nowMs()),
    };
    await insertRuns(h.deps.db, [{ ...base, id: runId, input: { deliveryOptions: [{ handle: 'x' }] } }]);
    const url = `/apps/developer/${app.appId}/functions/hider/runs/${runId}/replay`;

    const current = await h.req('POST', url, { token: app.developerToken });
    expect(current.statusCode, current.body).toBe(200);
    expect(current.json().data.output).toEqual({ operations: [{ hide: { handle: 'from-manifest' } }] });

    await h.req('PATCH', `/functions/${f.functionId}`, { token: merchant.token, body: { configuration: { hide: 'from-merchant' } } });
    const configured = await h.req('POST', url, { token: app.developerToken, body: {} });
    expect(configured.json().data.output).toEqual({ operations: [{ hide: { handle: 'from-merchant' } }] });

    const rewritten = await h.req('POST', url, { token: app.developerToken, body: { expression: '{"operations": input.deliveryOptions.map(o, {"rename": {"handle": o.handle, "title": "Renamed"}})}' } });
    expect(rewritten.json().data.output).toEqual({ operations: [{ rename: { handle: 'x', title: 'Renamed' } }] });
    expectEnvelopeError(await h.req('POST', url, { token: app.developerToken, body: { expression: '(' } }), 400, /does not parse/);

    expectEnvelopeError(await h.req('POST', `/apps/developer/${app.appId}/functions/hider/runs/${uuidv7()}/replay`, { token: app.developerToken }), 404);
    expectEnvelopeError(await h.req('POST', `/apps/developer/${app.appId}/functions/nope/runs/${runId}/replay`, { token: app.developerToken }), 404);
    const erased = uuidv7();
    await insertRuns(h.deps.db, [{ ...base, id: erased, input: null }]);
    expectEnvelopeError(await h.req('POST', `/apps/developer/${app.appId}/functions/hider/runs/${erased}/replay`, { token: app.developerToken }), 409, /erased/);
  });
});
