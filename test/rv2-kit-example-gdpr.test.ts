// examples/shipping-app and the GDPR requests it may meet late (C9.3): the app runs as `npm start`
// runs it, on a loopback port, the platform is the real service on another, and every step is real HTTP (the
// platform's GDPR deliveries, the deadline job as the operator runs it, the app's GDPR calls).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { listenOnLoopback } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { createTestApp, installApp, operatorToken, signupMerchant, signupPartner, unique } from './helpers/actors.js';
import { handoffFor } from './helpers/sdk.js';
import { insertProduct, orderBody, takeOrder } from './helpers/orders.js';
import { gdprDispatcher } from '../src/gdpr/gdpr.dispatch.js';
import { freePort, startExampleApp, type ServiceProcess } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { signBody } from '../packages/app-sdk/src/index.js';

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createWebhookHarness();
  base = await listenOnLoopback(h);
});
afterAll(async () => {
  await h?.close();
});

const DAY = 86_400;

async function login(email: string): Promise<string> {
  const res = await h.req('POST', '/auth/login', { body: { email, password: 'correct-horse' } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.token;
}

describe('examples/shipping-app: a GDPR final notice (C9.3)', () => {
  it("the app erases the customer's data on the final notice, though the platform refuses its acknowledgment (409: the deadline passed)", async () => {
    const port = await freePort();
    const appUrl = `http://127.0.0.1:${port}`;
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, {
      scopes: ['read_orders', 'write_orders', 'read_customers'], tier: 'enterprise', appUrl,
      // customers/redact first goes where nothing answers (a wrong URL, an app down for a day).
      gdprUrls: { customerDataRequest: `${appUrl}/gdpr`, customerRedact: `http://127.0.0.1:${await freePort()}/gdpr`, shopRedact: `${appUrl}/gdpr` },
    });
    // The example app as `npm start` runs it, its tokens in a file that outlives a restart.
    const env = {
      PLATFORM_URL: base, CLIENT_ID: app.clientId, CLIENT_SECRET: app.clientSecret, APP_HANDLE: app.handle,
      PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: appUrl, TOKENS_FILE: join(tempDir('rv2-kit-'), 'tokens.json'),
    };
    const start = async () => {
      const svc = startExampleApp(env);
      await svc.waitFor(/listening/);
      return svc;
    };
    const stop = async (svc: ServiceProcess) => {
      svc.child.kill('SIGTERM');
      await svc.exited;
    };
    const exampleApp = await start();
    const res = await fetch(`${appUrl}/auth?${await handoffFor(h, merchant, app)}`);
    expect(res.status, await res.text()).toBe(200);

    // The app ships an order of the customer's (orders/create with its own rate).
    const email = `ada-${unique()}@example.com`;
    const order = await takeOrder(h, merchant.token, orderBody(await insertProduct(h, merchant.storeId)));
    const body = JSON.stringify({ id: order.orderId, name: '#1001', email, customer: null, shipping_lines: [{ source: app.handle }] });
    const shipped = await fetch(`${appUrl}/webhooks`, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', 'x-svc-hmac-sha256': signBody(body, app.clientSecret), 'x-svc-topic': 'orders/create', 'x-svc-shop-domain': merchant.slug, 'x-svc-webhook-id': `wh-${order.orderId}` },
    });
    expect(shipped.status).toBe(200);

    const settle = () => gdprDispatcher(h.deps).settle();
    const gdpr = async (path: string) => {
      const res = await h.req('POST', `/apps/gdpr/${path}`, { token: await login(merchant.email), body: { customerEmail: email } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.requestId as string;
    };
    const mine = async (requestId: string) => {
      const res = await h.req('GET', `/apps/gdpr/requests/${requestId}`, { token: await login(merchant.email) });
      return { request: res.json().data, app: res.json().data.appAcknowledgments.find((a: { appId: string }) => a.appId === app.appId) };
    };

    // A data request, honoured: the export holds the shipment.
    const dataId = await gdpr('data-request');
    await settle();
    await expect.poll(async () => (await mine(dataId)).app.status, { timeout: 20_000 }).toBe('completed');
    const exportUrl: string = (await mine(dataId)).request.dataExportUrl;
    expect(((await (await fetch(exportUrl)).json()) as { shipments: unknown[] }).shipments).toHaveLength(1);

    // The erasure does not reach the app (GDPR deliveries are not retried, C9.4); the developer
    // then fixes the URL.
    const redactId = await gdpr('customer-redact');
    await settle();
    expect((await mine(redactId)).app.status).toBe('pending');
    const fixed = await h.req('PATCH', `/apps/developer/apps/${app.appId}`, {
      token: partner.token, body: { gdprUrls: { customerDataRequest: `${appUrl}/gdpr`, customerRedact: `${appUrl}/gdpr`, shopRedact: `${appUrl}/gdpr` } },
    });
    expect(fixed.statusCode, fixed.body).toBe(200);

    try {
      // 30 days on: the merchant authorises the app again (its grant ended), and the deadline job
      // fails the app and sends it the webhook once more, as a final notice.
      await h.advance(30 * DAY + 3600);
      // The re-authorisation's tokens, kept where the app keeps them (its /auth checks the handoff's
      // timestamp on its own clock, which the test clock left 30 days behind).
      const again = await installApp(h, { ...merchant, token: await login(merchant.email) }, app);
      const never = Date.now() + 365 * DAY * 1000;
      writeFileSync(env.TOKENS_FILE, JSON.stringify({
        [merchant.slug]: { accessToken: again.accessToken, refreshToken: again.refreshToken, accessExpiresAt: never, refreshExpiresAt: never, scopes: [] },
      }));
      const run = await h.req('POST', '/apps/admin/jobs/gdpr-deadlines/run', { token: await operatorToken(h) });
      expect(run.statusCode, run.body).toBe(200);
      await settle();
      expect((await mine(redactId)).app.status).toBe('failed');
      await exampleApp.waitFor(new RegExp(`GDPR .*${redactId}`), 20_000);
      expect(exampleApp.output()).toContain(`GDPR request ${redactId} on ${merchant.slug}: Error: This app already failed the request`);

      // The platform refuses the late acknowledgment (409), but the customer asked to be erased:
      // the app no longer holds the shipment (its export link finds nothing).
      expect((await fetch(exportUrl)).status).toBe(404);
    } finally {
      await stop(exampleApp);
    }
  }, 90_000);
});
