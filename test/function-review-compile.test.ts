// C11.1's compile of expressions (up to 10,000 characters, up to 100 functions an app) is work for a
// worker thread, never for the event loop: app create and PATCH compile the manifest's expressions in
// the declarations' worker, and trying an expression (C11.7) compiles it in the developers' worker,
// once the run holds its places. The 400 bodies are those of the in-thread check. Real workers, no mocks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp, signupPartner } from './helpers/actors.js';
import { readManifestFunctions } from '../src/functions/manifest-functions.js';
import { DEVELOPER_RUNS_IN_FLIGHT } from '../src/functions/developer-runs.js';
import { compileFunction, declarationProblems } from '../src/functions/runtime/index.js';

const DELIVERY = 'cart.delivery-options.transform.run';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

/** A valid expression of about 9,000 characters (C11.1 allows 10,000): a table of hide rules. */
function bigExpression(): string {
  const rules: string[] = [];
  for (let i = 0; rules.join(' + ').length < 8900; i++) {
    rules.push(`(input.checkout.line_items.exists(l, l.sku == "SKU-${i}") ? [{"hide": {"handle": "h${i}"}}] : [])`);
  }
  return `{"operations": ${rules.join(' + ')}}`;
}
/** `n` such expressions no worker's cache knows (each test its own `from`): told apart by trailing spaces. */
const distinct = (n: number, from: number) => Array.from({ length: n }, (_, i) => bigExpression() + ' '.repeat(from + i));

/** The largest gap between the ticks of a 20 ms interval while `work` runs: how long the event loop was held. */
async function largestGap<T>(work: () => Promise<T>): Promise<{ gap: number; result: T }> {
  let last = performance.now();
  let gap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 20);
  try {
    const result = await work();
    gap = Math.max(gap, performance.now() - last);
    return { gap, result };
  } finally {
    clearInterval(timer);
  }
}

describe('C11.1: declared expressions are compiled off the event loop', () => {
  it('creating an app with eight 9,000-character functions leaves the event loop free', async () => {
    const partner = await signupPartner(h);
    // The declarations' worker started (its first start bundles the worker file, once per process).
    await readManifestFunctions([{ handle: 'warm', target: DELIVERY, expression: '{"operations": []}' }]);
    const expressions = distinct(8, 1);
    const functions = expressions.map((expression, i) => ({ handle: `f${i}`, target: DELIVERY, expression }));
    const { gap, result: res } = await largestGap(() => h.req('POST', '/apps/developer/apps', {
      token: partner.token,
      body: { name: `Big ${Date.now()}`, appUrl: 'https://app.example.com', scopes: ['read_orders'], extensions: { functions } },
    }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.app.extensions.functions.map((f: { expression: string }) => f.expression)).toEqual(expressions);
    // The same work in this thread (eight other fresh expressions): what the request held the event
    // loop for, in one stretch, when it compiled there.
    const t = performance.now();
    for (const expression of distinct(8, 60)) expect(compileFunction(expression)).toMatchObject({ ok: true });
    const inThread = performance.now() - t;
    expect(gap, JSON.stringify({ gap, inThread })).toBeLessThan(inThread / 3);
  }, 300_000);

  it('the manifest reader: the same functions, and the same first 400 in the functions\' order', async () => {
    const good = { handle: 'ok', target: DELIVERY, expression: '{"operations": []}' };
    const bad = { handle: 'bad', target: 'cart.nope', expression: '{"operations": [', configuration: [] };
    const declared = distinct(4, 20).map((expression, i) => ({ handle: `r${i}`, target: DELIVERY, expression }));
    expect(await readManifestFunctions(declared)).toEqual(declared.map((f) => ({ ...f, title: null, configuration: {} })));
    // The in-thread check's sentence, after the function's place and handle.
    const message = `extensions.functions[1] (bad): ${declarationProblems(bad).join('; ')}`;
    await expect(readManifestFunctions([good, bad])).rejects.toMatchObject({ status: 400, message });
    // A bad expression before a bad handle: the expression's 400, as when each was checked in turn.
    await expect(readManifestFunctions([good, bad, { handle: 'Not A Slug', target: DELIVERY, expression: '1' }])).rejects.toMatchObject({ message });
    await expect(readManifestFunctions([good, { handle: 'Not A Slug' }, bad])).rejects.toMatchObject({ message: 'extensions.functions[1].handle must be lowercase letters, digits and -' });
    await expect(readManifestFunctions([{ ...good, expression: 'x'.repeat(10_001) }])).rejects.toMatchObject({
      message: 'extensions.functions[0] (ok): expression is too long (10001 characters; the maximum is 10000)',
    });
  }, 300_000);
});

describe('C11.7: trying an expression compiles it in the developers\' worker, after admission', () => {
  it('a try of a 9,000-character expression is checked in the developers\' worker, then run there', async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const [expression] = distinct(1, 40);
    const tasks = h.deps.developerFunctions.stats().tasks;
    const res = await h.req('POST', `/apps/developer/${app.appId}/functions/run`, {
      token: partner.token,
      body: { target: DELIVERY, expression, input: { checkout: { line_items: [{ sku: 'SKU-3', id: 'a' }] }, deliveryOptions: [] } },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'success', output: { operations: [{ hide: { handle: 'h3' } }] } });
    // Two tasks in the developers' worker: the compile check, then the run. Before: the run alone
    // (the check was made in the event loop).
    expect(h.deps.developerFunctions.stats().tasks - tasks).toBe(2);
  }, 300_000);

  it('with the app\'s places taken, a try is refused before its expression is compiled (429, not 400)', async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const releases = Array.from({ length: DEVELOPER_RUNS_IN_FLIGHT }, () => h.deps.developerFunctions.admit(app.appId));
    try {
      const res = await h.req('POST', `/apps/developer/${app.appId}/functions/run`, { token: partner.token, body: { target: DELIVERY, expression: '{"operations": [', input: {} } });
      // Before: the expression was compiled in the event loop first, and the answer was its 400.
      expect(res.statusCode, res.body).toBe(429);
    } finally {
      for (const release of releases) release();
    }
    // With places free: the same 400 body as the in-thread check gives.
    const res = await h.req('POST', `/apps/developer/${app.appId}/functions/run`, { token: partner.token, body: { target: DELIVERY, expression: '{"operations": [', input: {} } });
    expect(res.statusCode).toBe(400);
    const problem = (compileFunction('{"operations": [') as { problem: string }).problem;
    expect(res.json()).toMatchObject({ message: problem });
  });
});
