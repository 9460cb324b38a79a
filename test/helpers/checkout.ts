// The storefront checkout routes (C15.1) as test calls, for a store given by its merchant's slug.
// `harness` is asked for at call time, so a file can make these before its beforeAll runs.
import type { Harness } from './harness.js';

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
