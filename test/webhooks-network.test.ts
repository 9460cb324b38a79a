// Delivery over the network: the 10-second deadline (app-api.md Retries 4), one slow host not
// starving the others, address safety at save and send time (C8.9), and the worker loop's
// LISTEN/NOTIFY wake-ups and polling fallback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { storeWithApp } from './helpers/actors.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { attemptsOf, deliveriesOfStore, emitEvent, runDeliveries, subscribe, webhookStore, WEBHOOK_SCOPES } from './fixtures/webhook-setup.js';
import { PUBLIC_URL } from './fixtures/addresses.js';
import { PER_HOST_CONCURRENCY } from '../src/webhooks/http-client.js';
import { WebhookEngine } from '../src/webhooks/engine.js';
import { redeliver } from '../src/webhooks/delivery-log.js';
import { SystemClock } from '../src/clock.js';
import { emit } from '../src/outbox/emit.js';

let h: Harness;
const receivers: Receiver[] = [];
const receiver = async (...args: Parameters<typeof startReceiver>) => {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
};
beforeAll(async () => {
  h = await createWebhookHarness();
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await h?.close();
});

describe('the 10 s deadline and per-host isolation', () => {
  it('a receiver that never answers is cut at 10 s and retried; it holds at most its host share while others are served', async () => {
    const s = await webhookStore(h);
    // The first PER_HOST_CONCURRENCY requests hang; later ones are answered at once.
    const slow = await receiver((_req, i) => (i < PER_HOST_CONCURRENCY ? 'hang' : { status: 200 }));
    const fast = await receiver();
    const slowPaths = Array.from({ length: PER_HOST_CONCURRENCY + 4 }, (_, i) => `/slow-${i}`);
    for (const p of slowPaths) await subscribe(h, s.accessToken, 'fulfillments/create', `${slow.url}${p}`);
    for (let i = 0; i < 5; i++) await subscribe(h, s.accessToken, 'fulfillments/create', `${fast.url}/fast-${i}`);
    await emitEvent(h, s.merchant.storeId, 'fulfillments/create', { id: 1 });

    const started = Date.now();
    const job = runDeliveries(h);
    // The fast host is served while the slow one holds its connections.
    await expect.poll(() => fast.received.length, { timeout: 8000 }).toBe(5);
    await expect.poll(() => slow.received.length, { timeout: 8000 }).toBe(PER_HOST_CONCURRENCY);
    expect(Date.now() - started).toBeLessThan(9000);
    // Never more than its share at once: the other slow deliveries wait for a free slot.
    await new Promise((r) => setTimeout(r, 300));
    expect(slow.received.length).toBe(PER_HOST_CONCURRENCY);
    await job;
    expect(Date.now() - started).toBeGreaterThanOrEqual(9900);

    const rows = await deliveriesOfStore(h, s.merchant.storeId);
    const hung = rows.filter((r) => r.status === 'retrying');
    expect(hung).toHaveLength(PER_HOST_CONCURRENCY);
    expect(rows.filter((r) => r.status === 'success')).toHaveLength(9);
    for (const r of hung) {
      expect(r.last_error).toBe('timeout');
      const [attempt] = await attemptsOf(h, r.id);
      expect(attempt.error).toBe('timeout');
      expect(attempt.response_status).toBeNull();
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(9900);
      expect(attempt.duration_ms).toBeLessThan(15_000);
    }
    await h.advance(70);
    await runDeliveries(h);
    const after = await deliveriesOfStore(h, s.merchant.storeId);
    expect(after.every((r) => r.status === 'success')).toBe(true);
    for (const r of hung) expect(slow.byWebhookId(r.webhook_id).map((x) => x.headers['x-svc-delivery-attempt'])).toEqual(['1', '2']);
  }, 60_000);

  it('a refused connection is a network error, retried', async () => {
    const s = await webhookStore(h);
    const gone = await startReceiver();
    const address = `${gone.url}/gone`;
    await gone.close();
    await subscribe(h, s.accessToken, 'orders/delete', address);
    await emitEvent(h, s.merchant.storeId, 'orders/delete', { id: 1 });
    await runDeliveries(h);
    const [row] = await deliveriesOfStore(h, s.merchant.storeId);
    expect(row).toMatchObject({ status: 'retrying', attempt_count: 1, last_error: 'network_error: ECONNREFUSED' });
  });
});

describe('C8.9 address safety with private addresses not allowed', () => {
  let strict: Harness;
  beforeAll(async () => {
    strict = await createWebhookHarness({ SVC_ALLOW_PRIVATE_WEBHOOKS: '0' });
  });
  afterAll(() => strict?.close());

  // A public IP literal (no DNS needed); the whole list of refused forms: address-safety.test.ts.
  const PUBLIC = PUBLIC_URL;

  it('refuses loopback, private, link-local, metadata and plain-http addresses when saved (422)', async () => {
    const s = await storeWithApp(strict, { scopes: WEBHOOK_SCOPES, appUrl: PUBLIC });
    for (const address of ['http://1.1.1.1/hook', 'https://127.0.0.1/hook', 'https://localhost/hook', 'https://10.1.2.3/hook',
      'https://192.168.1.1/hook', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/hook', 'https://[fd00::1]/hook']) {
      const res = await strict.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { topic: 'orders/create', address } });
      expect(res.statusCode, address).toBe(422);
      expect(res.json().errors.address).toEqual([expect.any(String)]);
      const store = await strict.req('POST', '/webhooks', { token: s.merchant.token, body: { topic: 'orders/create', address } });
      expect(store.statusCode, address).toBe(422);
    }
    expect((await strict.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { topic: 'orders/create', address: `${PUBLIC}/hook` } })).statusCode).toBe(201);
  });

  it('a delivery whose address is, or resolves to, a private address is not sent: failed with blocked_address', async () => {
    const s = await storeWithApp(strict, { scopes: WEBHOOK_SCOPES, appUrl: PUBLIC });
    const target = await receiver();
    // Saved while private addresses were allowed (or a name that resolved elsewhere then): the
    // rows are written directly, as the API would now refuse them.
    for (const address of [`${target.url}/ip`, `http://localhost:${target.port}/name`]) {
      await strict.db.query(
        `INSERT INTO webhook_subscriptions (id, installation_id, app_id, store_id, topic, address, secret_enc, api_version, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, $2, $3, 'orders/create', $4, $5, '2026-06', now(), now())`,
        [s.installationId, s.app.appId, s.merchant.storeId, address, strict.deps.secrets.seal('secret')],
      );
    }
    await emitEvent(strict, s.merchant.storeId, 'orders/create', { id: 1 });
    expect(await runDeliveries(strict)).toBe(2);
    const rows = await deliveriesOfStore(strict, s.merchant.storeId);
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r).toMatchObject({ status: 'failed', attempt_count: 1, last_error: 'blocked_address' });
    expect(target.received).toEqual([]);
  });
});

describe('the worker loop', () => {
  // Its own engine on the real clock: on PostgreSQL every test file shares the database, and a loop
  // on this file's test clock (moved forward above) would take other files' retries early.
  it('wakes on NOTIFY for new events and redeliveries, and polls for work that came due', async () => {
    const engine = new WebhookEngine({ db: h.db, clock: new SystemClock(), config: h.config, secrets: h.deps.secrets, log: h.deps.log, metrics: h.deps.metrics });
    try {
      const s = await webhookStore(h);
      let status = 500;
      const rx = await receiver(() => ({ status }));
      await subscribe(h, s.accessToken, 'customers/delete', `${rx.url}/loop`);
      await engine.start();
      await h.db.transaction((tx) => emit(tx, { storeId: s.merchant.storeId, topic: 'customers/delete', payload: { id: 1 }, now: new Date() }));
      // No job run: the outbox NOTIFY wakes the loop.
      await expect.poll(() => rx.received.length, { timeout: 10_000 }).toBe(1);
      await expect.poll(async () => (await deliveriesOfStore(h, s.merchant.storeId))[0]?.status, { timeout: 10_000 }).toBe('retrying');
      const [row] = await deliveriesOfStore(h, s.merchant.storeId);

      // The retry comes due without a notification: only the poll finds it.
      status = 200;
      await h.db.query('UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1', [row.id]);
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.received).toHaveLength(1);
      engine.poll();
      await expect.poll(async () => (await deliveriesOfStore(h, s.merchant.storeId))[0].status, { timeout: 10_000 }).toBe('success');

      // A redelivery notifies the workers.
      await redeliver(h.db, s.app.appId, row.id, new Date());
      await expect.poll(() => rx.received.length, { timeout: 10_000 }).toBe(3);
      expect(rx.received.map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2', '3']);
    } finally {
      await engine.close();
    }
  });
});
