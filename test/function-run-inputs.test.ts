// C11.5 run records store a target's input once for its runs (migration 0017): reads give every
// run its input exactly as before (token put back), old rows with the input inline still read, and
// retention and the erasure of a redacted customer (C9) delete an input with its last run, never
// before. Records are written through the repository, as the recorder writes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { DELIVERY_TARGET as DELIVERY } from '../src/checkout/checkout-functions.js';
import { createTestApp, installApp, signupMerchant, signupPartner, unique } from './helpers/actors.js';
import { deleteRunsBefore, eraseRunsAtCheckouts, insertRuns, type NewRun } from '../src/functions/function-runs.repo.js';
import { JsonText } from '../src/db/sql.js';
import fc from 'fast-check';
import { storedInputText, withoutToken } from '../src/functions/function-view.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const fn = (handle: string) => ({ handle, target: DELIVERY, expression: '{"operations": [{"hide": {"handle": input.deliveryOptions[0].handle}}]}' });

/** An app with three delivery functions on a store, and a maker of runs as runTarget makes them. */
async function setup() {
  const merchant = await signupMerchant(h);
  const partner = await signupPartner(h);
  const app = await createTestApp(h, partner.token, { extensions: { functions: [fn('a'), fn('b'), fn('c')] } });
  await installApp(h, merchant, app);
  const res = await h.req('GET', '/functions', { token: merchant.token });
  const functions = (res.json().data.functions as any[]).filter((f) => f.appId === app.appId);
  /** One target's runs at one checkout step: one input (the same JsonText), one moment. */
  const step = (at: Date, checkoutId = uuidv7()) => {
    const token = `chk_${unique()}`;
    const input = { checkout: { token, email: `buyer-${unique()}@example.com` }, shop: { id: merchant.storeId }, deliveryOptions: [{ handle: 'std', price: '4.99' }] };
    const stored = new JsonText(JSON.stringify(withoutToken(input)));
    const sealed = h.deps.secrets.seal(token);
    const runs = functions.map((f, i): NewRun => ({
      id: uuidv7(at.getTime()), appId: app.appId, storeId: merchant.storeId, functionId: f.functionId, functionHandle: f.handle, target: DELIVERY,
      status: 'success', errorType: null, errorMessage: null, input: stored, inputBytes: 200 + i, output: { operations: [] }, outputBytes: 17,
      durationMs: 0.5, checkoutId, checkoutTokenSealed: sealed, createdAt: at,
    }));
    return { input, token, runs, checkoutId };
  };
  return { merchant, app, step };
}

const inputRows = async (appId: string) =>
  (await h.db.query<{ input_id: string | null }>('SELECT DISTINCT input_id FROM function_runs WHERE app_id = $1', [appId])).rows.map((r) => r.input_id);
const inputExists = async (id: string | null) => (await h.db.query('SELECT 1 FROM function_run_inputs WHERE id = $1', [id])).rows.length === 1;

describe('C11.5 a target input stored once', () => {
  it("N runs of one step share one input row; the runs endpoint and replay give each run's input exactly, token in place", async () => {
    const { app, step } = await setup();
    const one = step(new Date(h.deps.clock.nowMs() - 2000));
    const two = step(new Date(h.deps.clock.nowMs() - 1000));
    await insertRuns(h.deps.db, [...one.runs, ...two.runs]);

    const ids = await inputRows(app.appId);
    expect(ids).toHaveLength(2);
    const { rows } = await h.db.query<any>('SELECT input_id, count(*)::int AS n, bool_and(input IS NULL) AS inline_empty FROM function_runs WHERE app_id = $1 GROUP BY input_id', [app.appId]);
    expect(rows.map((r: any) => [r.n, r.inline_empty])).toEqual([[3, true], [3, true]]);

    const res = await h.req('GET', `/apps/developer/${app.appId}/functions/all/runs`, { token: app.developerToken });
    expect(res.statusCode, res.body).toBe(200);
    const runs = res.json().data.runs;
    expect(runs).toHaveLength(6);
    for (const run of runs) {
      const made = one.runs.some((r) => r.id === run.runId) ? one : two;
      expect(run.input).toEqual(made.input);
      expect(run.checkoutToken).toBe(made.token);
    }
    const replay = await h.req('POST', `/apps/developer/${app.appId}/functions/b/runs/${one.runs[1].id}/replay`, { token: app.developerToken, body: {} });
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.json().data).toMatchObject({ status: 'success', output: { operations: [{ hide: { handle: 'std' } }] } });
  });

  it('a run recorded before migration 0017 (input inline, no input_id) still reads and replays', async () => {
    const { app, step } = await setup();
    const { runs, input, token } = step(new Date(h.deps.clock.nowMs() - 1000));
    const r = runs[0];
    await h.db.query(
      `INSERT INTO function_runs (id, app_id, store_id, function_id, function_handle, target, status, error_type, error_message, input, input_bytes,
         output, output_bytes, duration_ms, checkout_id, checkout_token_enc, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'success', NULL, NULL, $7::jsonb, 200, '{"operations": []}'::jsonb, 17, 0.5, $8, $9, $10)`,
      [r.id, r.appId, r.storeId, r.functionId, r.functionHandle, r.target, (r.input as JsonText).text, r.checkoutId, r.checkoutTokenSealed, r.createdAt],
    );
    const res = await h.req('GET', `/apps/developer/${app.appId}/functions/a/runs`, { token: app.developerToken });
    expect(res.json().data.runs).toEqual([expect.objectContaining({ runId: r.id, input, checkoutToken: token, output: { operations: [] } })]);
    const replay = await h.req('POST', `/apps/developer/${app.appId}/functions/a/runs/${r.id}/replay`, { token: app.developerToken, body: {} });
    expect(replay.json().data).toMatchObject({ status: 'success', output: { operations: [{ hide: { handle: 'std' } }] } });
  });
});

describe('C11.5 deleting runs deletes their input with the last of them', () => {
  it("retention: a batch ends on a whole moment, so an old step's runs go with their input together, and a kept step keeps its input", async () => {
    const { app, step } = await setup();
    const retention = h.deps.config.deliveryRetentionDays * 86_400_000;
    const old = step(new Date(h.deps.clock.nowMs() - retention - 60_000));
    const kept = step(new Date(h.deps.clock.nowMs() - 1000));
    await insertRuns(h.deps.db, [...old.runs, ...kept.runs]);
    const [oldInput, keptInput] = [await inputOf(old.runs[0].id), await inputOf(kept.runs[0].id)];
    const cutoff = new Date(h.deps.clock.nowMs() - retention);

    // Batches of one run: other apps' old runs in this database may come first, so repeat until
    // this step's runs are gone; none of them ever goes without the others and the input.
    for (;;) {
      const left = (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM function_runs WHERE input_id = $1', [oldInput])).rows[0].n;
      expect([0, 3]).toContain(left);
      expect(await inputExists(oldInput)).toBe(left > 0);
      if (!left) break;
      await deleteRunsBefore(h.deps.db, cutoff, 1);
    }
    expect(await inputExists(keptInput)).toBe(true);
    const res = await h.req('GET', `/apps/developer/${app.appId}/functions/all/runs`, { token: app.developerToken });
    expect(res.json().data.runs.map((r: any) => r.input)).toEqual([kept.input, kept.input, kept.input]);
  });

  it("erasure: a checkout's runs lose their input and it is deleted, unless a run at another checkout still uses it", async () => {
    const { app, step } = await setup();
    const at = new Date(h.deps.clock.nowMs() - 1000);
    const whole = step(at);
    // Not something a checkout writes (a step's runs share a checkout), but the deletion must not depend on it.
    const split = step(at);
    const elsewhere = uuidv7();
    split.runs[2] = { ...split.runs[2], checkoutId: elsewhere };
    await insertRuns(h.deps.db, [...whole.runs, ...split.runs]);
    const [wholeInput, splitInput] = [await inputOf(whole.runs[0].id), await inputOf(split.runs[0].id)];
    expect(await inputOf(split.runs[2].id)).toBe(splitInput);

    await h.db.transaction((tx) => eraseRunsAtCheckouts(tx, whole.runs[0].storeId, [whole.checkoutId, split.checkoutId]));
    expect(await inputExists(wholeInput)).toBe(false);
    expect(await inputExists(splitInput)).toBe(true);
    const res = await h.req('GET', `/apps/developer/${app.appId}/functions/all/runs`, { token: app.developerToken });
    const byId = new Map((res.json().data.runs as any[]).map((r) => [r.runId, r]));
    for (const r of [...whole.runs, ...split.runs.slice(0, 2)]) expect(byId.get(r.id)).toMatchObject({ input: null, output: null, checkoutToken: null });
    expect(byId.get(split.runs[2].id)).toMatchObject({ input: split.input, checkoutToken: split.token });

    await h.db.transaction((tx) => eraseRunsAtCheckouts(tx, whole.runs[0].storeId, [elsewhere]));
    expect(await inputExists(splitInput)).toBe(false);
    expect(await inputRows(app.appId)).toEqual([null]);
  });
});

async function inputOf(runId: string): Promise<string> {
  const { rows } = await h.db.query<{ input_id: string }>('SELECT input_id FROM function_runs WHERE id = $1', [runId]);
  return rows[0].input_id;
}

describe('C11.5 run records carry no foreign keys (migration 0020)', () => {
  it("recording runs takes no lock on the store's or the app's row: an order's update of the store row does not wait, nor they for it", async () => {
    const { step, merchant } = await setup();
    expect((await h.db.query(`SELECT conname FROM pg_constraint WHERE conrelid = 'function_runs'::regclass AND contype = 'f'`)).rows).toEqual([]);
    // Runs recorded inside an open transaction leave no row lock on the store: another connection
    // can lock it FOR UPDATE (what no KEY SHARE lock allows) without waiting. PostgreSQL only: the
    // embedded database runs one transaction at a time.
    if (h.db.kind !== 'postgres') return;
    await h.db.transaction(async (tx) => {
      await insertRuns(Object.assign(tx, { kind: h.db.kind }), step(new Date()).runs);
      const other = await h.db.query(`SELECT id FROM stores WHERE id = $1 FOR UPDATE NOWAIT`, [merchant.storeId]);
      expect(other.rows).toHaveLength(1);
    });
  });
});

describe('storedInputText', () => {
  it('is exactly JSON.stringify(withoutToken(input)) for any input, the token first or not', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const checkout = fc.oneof(
      // As checkoutView builds it: the token first, then the rest.
      fc.tuple(fc.string({ unit: 'grapheme' }), fc.dictionary(fc.string(), json, { noNullPrototype: true })).map(([token, rest]) => ({ token, ...rest })),
      fc.dictionary(fc.constantFrom('token', 'email', '"token"', 'x'), json, { noNullPrototype: true }),
      json,
    );
    const input = fc.oneof(
      fc.record({ checkout, shop: json }),
      fc.record({ shop: json, checkout }),
      json,
    );
    fc.assert(fc.property(input, (value) => {
      const text = JSON.stringify(value);
      if (text === undefined) return;
      expect(storedInputText(value, text)).toBe(JSON.stringify(withoutToken(value)));
    }), { numRuns: 3000 });
  });
});
