// The storefront checkout routes (C15.1) as test calls, for a store given by its merchant's slug.
// `harness` is asked for at call time, so a file can make these before its beforeAll runs.
import type { Harness } from './harness.js';
import { uuidv7 } from '../../src/ids.js';

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
