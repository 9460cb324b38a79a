// The storefront checkout routes (C15.1) as test calls, for a store given by its merchant's slug.
// `harness` is asked for at call time, so a file can make these before its beforeAll runs.
import type { Harness } from './harness.js';
import { uuidv7 } from '../../src/ids.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { createTestApp, installApp, signupPartner } from './actors.js';
import { address, insertProduct, orderStore, uniq } from './orders.js';

type WithStore = { merchant: { slug: string } };

export function checkoutCalls(harness: () => Harness) {
  const base = (s: WithStore) => `/storefront/${s.merchant.slug}/checkouts`;
  return {
    create: (s: WithStore, body: unknown) => harness().req('POST', base(s), { body }),
    read: (s: WithStore, token: string) => harness().req('GET', `${base(s)}/${token}`),
    change: (s: WithStore, token: string, body: unknown) => harness().req('PATCH', `${base(s)}/${token}`, { body }),
    rates: (s: WithStore, token: string) => harness().req('GET', `${base(s)}/${token}/shipping_rates`),
    complete: (s: WithStore, token: string) => harness().req('POST', `${base(s)}/${token}/complete`),
  };
}

/** A Simple zone (C15.2) of the store, written straight to its table; its id. */
export async function insertSimpleZone(h: Harness, storeId: string, z: { name: string; countries: string[]; price: number }): Promise<string> {
  const id = uuidv7();
  await h.db.query(
    `INSERT INTO shipping_zones (id, store_id, name, countries, price_minor, type, created_at, updated_at)
     VALUES ($1, $2, $3, $4::jsonb, $5, 'Simple', now(), now())`,
    [id, storeId, z.name, JSON.stringify(z.countries), z.price],
  );
  return id;
}

/**
 * A store with one shipping app installed whose rates URL answers `rates` (C15.3), a product of
 * 12.50 and a checkout of it to the test address: what a test of an app's live rates starts from.
 * Close `rx` when done.
 */
export async function checkoutWithShippingApp(h: Harness, rates: unknown[]) {
  const rx = await startReceiver(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rates }) }));
  const s = await orderStore(h);
  const partner = await signupPartner(h);
  const app = await createTestApp(h, partner.token, { scopes: ['write_shipping'], extensions: { shipping: { ratesUrl: `${rx.url}/rates` } } });
  await installApp(h, s.merchant, app);
  const product = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 10 });
  const made = await h.req('POST', `/storefront/${s.merchant.slug}/checkouts`, {
    body: { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address },
  });
  if (made.statusCode !== 201) throw new Error(`checkout create failed: ${made.body}`);
  return { rx, s, app, token: made.json().data.checkout.token as string };
}
