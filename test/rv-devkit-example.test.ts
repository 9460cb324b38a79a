// examples/shipping-app reviewed as the SDK's README asks an app to be built: bugs found and fixed
// (docs/decisions.md, "App developer kit (issue 14)"). The app runs in-process on a loopback port,
// the platform is the real service on another, with a rate limiter that holds this app to a tiny limit.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, listenOnLoopback, type Harness } from './helpers/harness.js';
import { createTestApp, signupMerchant, signupPartner } from './helpers/actors.js';
import { handoffFor } from './helpers/sdk.js';
import { insertProduct, orderBody, takeOrder } from './helpers/orders.js';
import { tinyLimiter } from './helpers/tiny-limits.js';
import { exchangeCode, MemoryTokenStore, signBody, TokenKeeper, verifyHandoff, type AppCredentials } from '../packages/app-sdk/src/index.js';
import { createShippingApp } from '../examples/shipping-app/src/app.js';

const TINY = 2;
const { limiter, tinyApps, refusals } = tinyLimiter(TINY);

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createHarness({}, { limiter });
  base = await listenOnLoopback(h);
});
afterAll(async () => {
  await h?.close();
});

describe('examples/shipping-app and the App API rate limit (app-api.md Limits)', () => {
  it('a burst of orders/create deliveries for one store shares one budget: every order is fulfilled, no request meets a 429', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { scopes: ['read_orders', 'write_orders'] });
    tinyApps.add(app.appId);
    const creds: AppCredentials = { baseUrl: base, clientId: app.clientId, clientSecret: app.clientSecret };
    const handoff = verifyHandoff(await handoffFor(h, merchant, app), app.clientSecret);
    if (!handoff.ok) throw new Error(handoff.reason);
    const keeper = new TokenKeeper(creds, new MemoryTokenStore());
    await keeper.install(handoff.shop, await exchangeCode(creds, handoff));

    const server = createShippingApp({ app: creds, handle: app.handle, publicUrl: 'http://127.0.0.1', keeper, log: () => {} });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const product = await insertProduct(h, merchant.storeId);
      const orders = [];
      for (let i = 0; i < 3 * TINY; i++) orders.push(await takeOrder(h, merchant.token, orderBody(product)));
      // The platform delivers to one host up to 32 at a time: the whole burst at once.
      const answers = await Promise.all(orders.map(async (o, i) => {
        const body = JSON.stringify({ id: o.orderId, name: `#${1000 + i}`, email: null, customer: null, shipping_lines: [{ source: app.handle }] });
        const res = await fetch(`${appUrl}/webhooks`, {
          method: 'POST', body,
          headers: {
            'content-type': 'application/json', 'x-svc-hmac-sha256': signBody(body, app.clientSecret), 'x-svc-topic': 'orders/create',
            'x-svc-shop-domain': merchant.slug, 'x-svc-webhook-id': `wh-${i}-${o.orderId}`,
          },
        });
        return res.status;
      }));
      expect(answers).toEqual(Array(orders.length).fill(200));
      const { rows } = await h.db.query<{ n: number }>(`SELECT count(DISTINCT order_id)::int AS n FROM fulfillments WHERE order_id = ANY(SELECT id FROM orders WHERE store_id = $1)`, [merchant.storeId]);
      expect(rows[0].n).toBe(orders.length);
      expect(refusals.filter((k) => k.startsWith(`${app.appId}:`))).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 60_000);
});
