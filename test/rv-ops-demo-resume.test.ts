// The first-run demo (C1.5) when the first start does not finish loading it: `npm start` stopped
// (Ctrl-C, SIGTERM, a kill, a crash) while the demo loads. The demo is many transactions (accounts,
// the app, the store's data, the install, a checkout); a start that dies after the first of them
// left accounts behind, so the next start found a non-empty database, loaded nothing more, and the
// README's walkthrough failed at its first step (the partner's login: 401) with no banner to say so.
// Each test here stops the load after its k-th statement (as a dying process would: a transaction
// under way is rolled back, the ones before stay), then starts again: the demo is whole, once.
import { afterAll, describe, expect, it } from 'vitest';
import type { Db, Tx } from '../src/db/db.js';
import type { Deps } from '../src/deps.js';
import { DEMO, seedIfEmpty } from '../src/seed/seed.js';
import { demoBanner } from '../src/seed/banner.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import type { Harness } from './helpers/harness.js';

class Killed extends Error {}

/** `db` that answers its first `statements` statements, then fails every call, as a dead process. */
function dyingAfter(db: Db, statements: number): { db: Db; count: () => number } {
  let n = 0;
  const tick = () => {
    if (++n > statements) throw new Killed(`killed after ${statements} statements`);
  };
  const passThrough = new Set(['close', 'kind', 'listen', 'exclusively', 'poolStats']);
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop) {
        const value = Reflect.get(t, prop, t);
        if (typeof value !== 'function' || passThrough.has(String(prop))) return typeof value === 'function' ? value.bind(t) : value;
        if (prop === 'transaction') {
          return async (fn: (tx: Tx) => Promise<unknown>, options?: unknown) => {
            tick();
            return value.call(t, (tx: Tx) => fn(wrap(tx)), options);
          };
        }
        return async (...args: unknown[]) => {
          tick();
          return value.apply(t, args);
        };
      },
    });
  return { db: wrap(db), count: () => n };
}

const auto = (deps: Deps, db: Db = deps.db): Deps => ({ ...deps, db, config: { ...deps.config, seed: 'auto' } });

const harnesses: Harness[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
});
async function fresh(): Promise<Harness> {
  const h = await createWebhookHarness();
  harnesses.push(h);
  return h;
}

/** The demo, whole and once: what the banner and the README's walkthrough rely on. */
async function expectWholeDemo(h: Harness) {
  const banner = (await demoBanner(auto(h.deps)))!;
  expect(banner, 'the banner').toMatch(/App access token \(valid 24 h\): svcat_/);
  for (const who of [DEMO.merchant, DEMO.partner]) {
    expect((await h.req('POST', '/auth/login', { body: { email: who.email, password: who.password } })).statusCode, who.email).toBe(200);
  }
  const one = async (sql: string, params: unknown[]) => (await h.db.query<{ n: number }>(sql, params)).rows[0].n;
  expect(await one('SELECT count(*)::int AS n FROM users WHERE lower(email) IN ($1, $2)', [DEMO.merchant.email, DEMO.partner.email])).toBe(2);
  expect(await one('SELECT count(*)::int AS n FROM apps WHERE name = $1', [DEMO.appName])).toBe(1);
  const store = (await h.db.query<{ id: string }>(`SELECT s.id FROM stores s JOIN users u ON u.store_id = s.id WHERE lower(u.email) = $1`, [DEMO.merchant.email])).rows[0].id;
  expect(await one('SELECT count(*)::int AS n FROM products WHERE store_id = $1', [store])).toBe(3);
  expect(await one('SELECT count(*)::int AS n FROM product_listings WHERE store_id = $1', [store])).toBe(1);
  expect(await one('SELECT count(*)::int AS n FROM store_functions WHERE store_id = $1 AND active', [store])).toBe(4);
  expect(await one(`SELECT count(*)::int AS n FROM installations WHERE store_id = $1 AND status = 'active'`, [store])).toBe(1);
  expect(await one('SELECT count(*)::int AS n FROM checkouts WHERE store_id = $1', [store])).toBe(1);
  // And a further start loads nothing.
  expect(await seedIfEmpty(auto(h.deps))).toBe(false);
}

let statements = 0;

describe('C1.5 the demo, loaded once', () => {
  it('a first start loads it; a second start, and SVC_SEED=demo on a loaded database, load nothing more', async () => {
    const h = await fresh();
    const counted = dyingAfter(h.db, Infinity);
    expect(await seedIfEmpty(auto(h.deps, counted.db))).toBe(true);
    statements = counted.count();
    expect(statements).toBeGreaterThan(10);
    expect(await seedIfEmpty({ ...h.deps, config: { ...h.deps.config, seed: 'demo' } })).toBe(false);
    await expectWholeDemo(h);
  }, 60_000);
});

describe('C1.5 a first start stopped while the demo loads: the next start finishes it', () => {
  // Stops spread over the whole load (each of its steps is a handful of statements).
  const stops = [0.02, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95];
  for (const at of stops) {
    it(`stopped at ${Math.round(at * 100)} % of the load's statements`, async () => {
      expect(statements, 'the full load ran first').toBeGreaterThan(10);
      const h = await fresh();
      const k = Math.max(1, Math.min(statements - 1, Math.round(statements * at)));
      const dying = dyingAfter(h.db, k);
      await expect(seedIfEmpty(auto(h.deps, dying.db))).rejects.toBeInstanceOf(Killed);
      // The next start, on the same database.
      expect(await seedIfEmpty(auto(h.deps)), `after a stop at statement ${k} of ${statements}`).toBe(true);
      await expectWholeDemo(h);
    }, 60_000);
  }
});
