// svc-app (packages/app-sdk/src/cli.ts) as a developer meets it against the real platform listening on
// loopback: its errors say what is wrong with what it was given.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback, type Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { startReceiver } from './fixtures/webhook-receiver.js';
import { createTestApp, operatorToken, signupPartner } from './helpers/actors.js';
import { tempDir } from './helpers/temp-dirs.js';
import { main } from '../packages/app-sdk/src/cli.js';

let h: Harness;
let base: string;
beforeAll(async () => {
  // A database of its own on PostgreSQL: the retention job below acts on every store's deliveries.
  h = await createWebhookHarness();
  base = await listenOnLoopback(h);
});
afterAll(() => h?.close());

describe('svc-app webhook verify', () => {
  it('a delivery whose bodies the platform pruned (C8.10, requestBody null) is said to be pruned, not "parsed JSON"', async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token);
    const rx = await startReceiver(() => ({ status: 200, body: 'ok' }));
    let deliveryId: string;
    try {
      const sent = await h.req('POST', `/apps/developer/${app.appId}/webhooks/test`, { token: partner.token, body: { topic: 'orders/create', address: `${rx.url}/hooks` } });
      expect(sent.statusCode, sent.body).toBe(200);
      deliveryId = sent.json().data.delivery.deliveryId;
    } finally {
      await rx.close();
    }
    // 31 days on, the retention job has pruned the bodies; the developer saves the delivery anyway.
    await h.advance(31 * 86_400);
    const job = await h.req('POST', '/apps/admin/jobs/webhook-retention/run', { token: await operatorToken(h) });
    expect(job.statusCode, job.body).toBe(200);
    const login = await h.req('POST', '/auth/login', { body: { email: partner.email, password: 'correct-horse' } });
    const got = await h.req('GET', `/apps/developer/${app.appId}/webhook-deliveries/${deliveryId}`, { token: login.json().data.token });
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json().data.delivery.requestBody).toBeNull();
    const file = join(tempDir('rv2-kit-'), 'pruned.json');
    writeFileSync(file, got.body);

    const err: string[] = [];
    await expect(main(['webhook', 'verify', '--secret', app.clientSecret, '--request', file], () => {}, (l) => err.push(l)))
      .rejects.toThrow(`${file}: the delivery's request body is no longer kept (the platform prunes delivery bodies after its retention period, C8.10): there is nothing to verify`);
  }, 60_000);
});
