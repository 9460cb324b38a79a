// The real service process delivering webhooks (C8.1, C1.3): a worker killed with SIGKILL while
// deliveries are in flight loses none of them once restarted, and on PostgreSQL two worker
// processes deliver thousands of webhooks together with every attempt made exactly once.
//
// On PostgreSQL the workers and this file's harness use a database of their own (the workers take
// every due delivery of the database they are given; see fixtures/webhook-harness.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TEST_SECRET, type Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { freePort, startService, type ServiceProcess } from './helpers/process.js';
import { startReceiver, verifySignature, type Receiver } from './fixtures/webhook-receiver.js';
import { subscribe, webhookStore, WEBHOOK_SCOPES } from './fixtures/webhook-setup.js';
import { remoteHarness } from './fixtures/webhook-remote.js';
import { invoiceEvent, signStripe } from './fixtures/webhook-stripe-events.js';
import { createTestApp, installApp, signupMerchant, signupPartner } from './helpers/actors.js';
import { emit } from '../src/outbox/emit.js';

const onPostgres = !!inject('testDatabaseUrl');
const children: ServiceProcess[] = [];
const dirs: string[] = [];
let rx: Receiver;
/** Answers are delayed so that deliveries are in flight when the worker is killed. */
let delayMs = 0;

beforeAll(async () => {
  rx = await startReceiver(() => ({ status: 200, delayMs }));
});
afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited));
  await rx?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const baseEnv = { SVC_SECRET: TEST_SECRET, SVC_SEED: 'none', SVC_ALLOW_PRIVATE_WEBHOOKS: '1', NODE_ENV: 'development' };

/** Every process listens (a worker for its health endpoints), each on a free port of its own. */
async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const svc = startService({ ...baseEnv, PORT: String(await freePort()), ...env });
  children.push(svc);
  return svc;
}

/** Distinct values of one payload field among the requests the receiver got on `path` (those it has answered, with `answered`). */
const markersOn = (path: string, field: string, answered = false) =>
  new Set(rx.received.filter((r) => r.path === path && (!answered || r.answeredAt !== null)).map((r) => JSON.parse(r.raw.toString())[field]));

/**
 * Kill the service with deliveries in flight, restart it, and wait until every event has reached
 * the receiver and `allSucceeded` says the service has recorded every delivery as a success.
 */
async function killAndRestart(svc: ServiceProcess, on: { path: string; field: string }, total: number, env: Record<string, string>, allSucceeded: () => Promise<boolean>) {
  const seen = () => markersOn(on.path, on.field);
  // Kill once deliveries are under way, with answers still to come (the receiver delays them).
  await expect.poll(() => seen().size, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(5);
  svc.child.kill('SIGKILL');
  expect((await svc.exited).signal).toBe('SIGKILL');
  // Some deliveries had no answer when the process died: whatever arrived by then, those could not
  // have been recorded as done, and must be made again. (Counting answers, not arrivals: on a
  // slow machine every event can have arrived before the kill, but not been answered.)
  expect(markersOn(on.path, on.field, true).size).toBeLessThan(total);
  delayMs = 0;
  const again = await spawnService(env);
  await again.waitFor(/process ready/);
  // Every event delivered at least once: leases of the killed process expire (or, on the embedded
  // database, are returned at start) and the rest is fanned out and sent.
  await expect.poll(() => seen().size, { timeout: 90_000, interval: 200 }).toBe(total);
  // An attempt cut off by the kill was not recorded: it is made again once its lease is back,
  // with the same webhook id (the receiver's idempotency key) and the same attempt number.
  await expect.poll(allSucceeded, { timeout: 90_000, interval: 500 }).toBe(true);
  const copies = new Map<string, Set<string>>();
  for (const r of rx.received) {
    const id = r.headers['x-svc-webhook-id'] as string;
    copies.set(id, (copies.get(id) ?? new Set()).add(`${r.headers['x-svc-delivery-attempt']} ${r.raw.toString('base64')}`));
  }
  for (const variants of copies.values()) expect(variants.size).toBe(1);
  again.child.kill('SIGTERM');
  expect((await again.exited).code).toBe(0);
}

describe.runIf(onPostgres)('crash: a worker process killed with SIGKILL (PostgreSQL)', () => {
  let h: Harness & { databaseUrl: string | null };
  beforeAll(async () => {
    h = await createWebhookHarness();
  });
  afterAll(() => h?.close());

  it('every event is delivered at least once after the restart', async () => {
    const s = await webhookStore(h);
    const sub = await subscribe(h, s.accessToken, 'orders/create', `${rx.url}/crash-pg`);
    const total = 80;
    delayMs = 400;
    await h.db.transaction(async (tx) => {
      for (let i = 0; i < total; i++) await emit(tx, { storeId: s.merchant.storeId, topic: 'orders/create', payload: { marker: i }, now: new Date() });
    });
    const env = { DATABASE_URL: h.databaseUrl!, SVC_ROLE: 'worker' };
    const svc = await spawnService(env);
    await killAndRestart(svc, { path: '/crash-pg', field: 'marker' }, total, env, async () => {
      const { rows } = await h.db.query<{ ok: number }>(
        `SELECT count(*) FILTER (WHERE status = 'success')::int AS ok FROM webhook_deliveries WHERE store_id = $1`, [s.merchant.storeId]);
      return rows[0].ok === total;
    });
    for (const r of rx.received.filter((x) => x.path === '/crash-pg')) expect(verifySignature(r.raw, r.headers['x-svc-hmac-sha256'], sub.secret)).toBe(true);
  }, 150_000);
});

describe.runIf(!onPostgres)('crash: the service process killed with SIGKILL (embedded database)', () => {
  it('every event is delivered at least once after the restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-webhook-crash-'));
    dirs.push(dataDir);
    const port = await freePort();
    const stripeSecret = 'whsec_crash_test';
    const env = { SVC_DATA_DIR: dataDir, PORT: String(port), SVC_ROLE: 'all', SVC_STRIPE_WEBHOOK_SECRET: stripeSecret };
    const svc = await spawnService(env);
    await svc.waitFor(/process ready/);
    const remote = remoteHarness(`http://127.0.0.1:${port}`);
    const merchant = await signupMerchant(remote);
    const partner = await signupPartner(remote);
    const app = await createTestApp(remote, partner.token, { scopes: WEBHOOK_SCOPES, tier: 'enterprise' });
    const installed = await installApp(remote, merchant, app);
    await subscribe(remote, installed.accessToken, 'subscriptions/create', `${rx.url}/crash-embedded`);

    // Events come in through the service's own payment-processor endpoint, one per subscription.
    const total = 60;
    delayMs = 1000;
    for (let i = 0; i < total; i++) {
      const e = invoiceEvent('invoice.paid', { subscriptionId: `sub_crash_${i}`, storeId: merchant.storeId, orderId: String(i) });
      const res = await remote.req('POST', '/payments/stripe/webhook', {
        payload: JSON.stringify(e), headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(JSON.stringify(e), stripeSecret) },
      });
      expect(res.statusCode).toBe(200);
    }
    // The marker of a subscription event is its order id.
    await killAndRestart(svc, { path: '/crash-embedded', field: 'orderId' }, total, env, async () => {
      const stats = await remote.req('GET', `/apps/developer/${app.appId}/webhook-deliveries/stats`, { token: partner.token });
      return stats.statusCode === 200 && stats.json().data.success === total;
    });
  }, 150_000);
});

describe.runIf(onPostgres)('two worker processes on PostgreSQL (C1.3)', () => {
  let h: Harness & { databaseUrl: string | null };
  beforeAll(async () => {
    h = await createWebhookHarness();
  });
  afterAll(() => h?.close());

  it('deliver 2000 webhooks together, each attempted exactly once', async () => {
    delayMs = 0;
    const s = await webhookStore(h);
    const paths = ['/mw-1', '/mw-2', '/mw-3', '/mw-4', '/mw-5'];
    for (const p of paths) await subscribe(h, s.accessToken, 'products/update', `${rx.url}${p}`);
    const env = { DATABASE_URL: h.databaseUrl!, SVC_ROLE: 'worker' };
    const workers = [await spawnService(env), await spawnService(env)];
    await Promise.all(workers.map((w) => w.waitFor(/svc worker process ready/)));

    const events = 400;
    for (let batch = 0; batch < 4; batch++) {
      await h.db.transaction(async (tx) => {
        for (let i = 0; i < events / 4; i++) await emit(tx, { storeId: s.merchant.storeId, topic: 'products/update', payload: { marker: batch * 100 + i }, now: new Date() });
      });
    }
    const mine = () => rx.received.filter((r) => paths.includes(r.path));
    await expect.poll(() => mine().length, { timeout: 90_000, interval: 200 }).toBeGreaterThanOrEqual(events * paths.length);
    // Give a duplicate, were there one, time to arrive.
    await new Promise((r) => setTimeout(r, 1500));
    const got = mine();
    expect(got).toHaveLength(2000);
    const perId = new Map<string, string[]>();
    for (const r of got) perId.set(r.headers['x-svc-webhook-id'] as string, [...(perId.get(r.headers['x-svc-webhook-id'] as string) ?? []), r.headers['x-svc-delivery-attempt'] as string]);
    expect(perId.size).toBe(2000);
    expect([...perId.values()].every((attempts) => attempts.length === 1 && attempts[0] === '1')).toBe(true);
    const { rows } = await h.db.query<{ n: number; attempts: number; ok: number }>(
      `SELECT count(*)::int AS n, sum(attempt_count)::int AS attempts, count(*) FILTER (WHERE status = 'success')::int AS ok
         FROM webhook_deliveries WHERE store_id = $1`, [s.merchant.storeId]);
    expect(rows[0]).toEqual({ n: 2000, attempts: 2000, ok: 2000 });
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) expect((await w.exited).code).toBe(0);
  }, 150_000);
});
