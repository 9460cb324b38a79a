// Migrations, the outbox (C8.1), the operator controls (C12.1, C12.2) and health (C1.4).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, openTestDb, type Harness } from './helpers/harness.js';
import { operatorToken, signupMerchant, signupPartner } from './helpers/actors.js';
import { loadMigrations, migrate, MigrationError } from '../src/db/migrate.js';
import { emit } from '../src/outbox/emit.js';

let h: Harness;
let ops: string;
beforeAll(async () => {
  h = await createHarness();
  ops = await operatorToken(h);
});
afterAll(() => h?.close());

describe('migrations', () => {
  it('are applied once: running them again applies nothing', async () => {
    expect(await migrate(h.db)).toBe(0);
    const { rows } = await h.db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
  });

  it('refuse to start when an applied migration file was edited', async () => {
    const edited = loadMigrations().map((m, i) => (i === 0 ? { ...m, hash: 'edited' } : m));
    await expect(migrate(h.db, edited)).rejects.toThrow(MigrationError);
  });
});

describe('C8.1 event outbox', () => {
  it('writes the event in the caller’s transaction: committed with the change', async () => {
    const m = await signupMerchant(h);
    const event = await h.db.transaction((tx) => emit(tx, { storeId: m.storeId, topic: 'products/create', payload: { id: 1, title: 'x' }, now: h.clock.now() }));
    const { rows } = await h.db.query('SELECT topic, payload, fanned_out_at FROM events WHERE id = $1', [event.id]);
    expect(rows).toEqual([{ topic: 'products/create', payload: { id: 1, title: 'x' }, fanned_out_at: null }]);
  });

  it('a rolled-back change leaves no event', async () => {
    const m = await signupMerchant(h);
    await expect(
      h.db.transaction(async (tx) => {
        await emit(tx, { storeId: m.storeId, topic: 'products/update', payload: {}, now: h.clock.now() });
        throw new Error('change failed');
      }),
    ).rejects.toThrow('change failed');
    const { rows } = await h.db.query('SELECT 1 FROM events WHERE store_id = $1', [m.storeId]);
    expect(rows).toEqual([]);
  });

  it('wakes listeners with NOTIFY on commit only', async () => {
    const m = await signupMerchant(h);
    const heard: string[] = [];
    const stop = await h.db.listen('svc_outbox', (id) => heard.push(id));
    let rolledBack = '';
    await h.db.transaction(async (tx) => {
      rolledBack = (await emit(tx, { storeId: m.storeId, topic: 'customers/create', payload: {}, now: h.clock.now() })).id;
      throw new Error('rollback');
    }).catch(() => {});
    const committed = await h.db.transaction((tx) => emit(tx, { storeId: m.storeId, topic: 'customers/create', payload: {}, now: h.clock.now() }));
    await expect.poll(() => heard.includes(committed.id), { timeout: 5000 }).toBe(true);
    // On PostgreSQL the channel is the database's, shared with the other test files running at the
    // same time: judge this test's two events only. The committed one is heard once, the other never.
    expect(rolledBack).not.toBe('');
    expect(heard.filter((id) => id === committed.id)).toHaveLength(1);
    expect(heard).not.toContain(rolledBack);
    await stop();
  });
});

describe('C12.1 test clock', () => {
  it('is read and advanced by the operator only', async () => {
    const merchant = await signupMerchant(h);
    expect((await h.req('GET', '/apps/admin/clock')).statusCode).toBe(401);
    expect((await h.req('GET', '/apps/admin/clock', { token: merchant.token })).statusCode).toBe(403);
    const before = (await h.req('GET', '/apps/admin/clock', { token: ops })).json().data.now;
    const res = await h.req('POST', '/apps/admin/clock/advance', { token: ops, body: { seconds: 3600 } });
    expect(res.statusCode).toBe(200);
    const after = new Date(res.json().data.now).getTime();
    expect(after - new Date(before).getTime()).toBeGreaterThanOrEqual(3600_000);
    expect(after - new Date(before).getTime()).toBeLessThan(3600_000 + 10_000);
  });

  it('refuses a negative, missing or out-of-range amount', async () => {
    expect((await h.req('POST', '/apps/admin/clock/advance', { token: ops, body: { seconds: -5 } })).statusCode).toBe(400);
    // More than ten years, or past what a date can hold: a 400, never a 500 (issue 10).
    for (const payload of ['{"seconds":315360001}', '{"seconds":1e308}', '{"seconds":123456789012345678901234567890}']) {
      const big = await h.req('POST', '/apps/admin/clock/advance', { token: ops, payload, headers: { 'content-type': 'application/json' } });
      expect(big.statusCode, payload).toBe(400);
    }
    const res = await h.req('POST', '/apps/admin/clock/advance', { token: ops, body: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, state: 'error', data: null });
  });

  it('moves platform JWT expiry with it', async () => {
    const merchant = await signupMerchant(h);
    expect((await h.req('GET', '/apps/installations', { token: merchant.token })).statusCode).toBe(200);
    await h.advance(12 * 3600 + 1);
    expect((await h.req('GET', '/apps/installations', { token: merchant.token })).statusCode).toBe(401);
  });
});

describe('C12.2 jobs', () => {
  // The clock tests above moved time past the first operator token's 12 hours.
  beforeAll(async () => {
    ops = await operatorToken(h);
  });

  it('runs a registered job to its end and answers { job, processed }', async () => {
    let runs = 0;
    h.deps.jobs.register('test-job', async () => ({ processed: ++runs }));
    const res = await h.req('POST', '/apps/admin/jobs/test-job/run', { token: ops });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 200, state: 'success', message: null, data: { job: 'test-job', processed: 1 }, count: null, pagination: null });
  });

  it('404 for an unknown job; operator only', async () => {
    expect((await h.req('POST', '/apps/admin/jobs/nope/run', { token: ops })).statusCode).toBe(404);
    const partner = await signupPartner(h);
    expect((await h.req('POST', '/apps/admin/jobs/test-job/run', { token: partner.token })).statusCode).toBe(403);
  });
});

describe('C1.4 health', () => {
  it('healthz and readyz answer 200', async () => {
    expect((await h.req('GET', '/healthz')).json()).toEqual({ status: 'ok' });
    expect((await h.req('GET', '/readyz')).statusCode).toBe(200);
  });

  it('readyz is 503 when the database does not answer', async () => {
    const other = await createHarness();
    await other.db.close();
    expect((await other.req('GET', '/readyz')).statusCode).toBe(503);
    expect((await other.req('GET', '/healthz')).statusCode).toBe(200);
    await other.app.close();
  });

  it('readyz is 503 before migrations are applied', async () => {
    const db = await openTestDb();
    // A database that is missing a migration is not ready.
    const { migrationsApplied } = await import('../src/db/migrate.js');
    expect(await migrationsApplied(db, [...loadMigrations(), { version: 9999, name: '9999_future', sql: '', hash: '' }])).toBe(false);
    await db.close();
  });
});
