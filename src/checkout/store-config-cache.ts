// This process's copy of what a checkout quote reads of its store besides the checkout: the zones,
// the shipping apps with the store's address, and the active functions. The database numbers each
// store's set (migration 0018: triggers move `store_checkout_configs.version` on every change to
// any of it); the quote query reads the store's version with the checkout, and the set is read
// again, by a statement of its own, only when the copy here is of another version
// (src/checkout/checkouts.repo.ts `findCheckoutForQuote`). So a quote is never served a stale set,
// in this process or any other, and most quotes read the checkout and its lines only.
import { alpha2 } from '../shipping/countries.js';
import { Lru } from '../functions/runtime/lru.js';
import type { StoreFunctionRow } from '../functions/functions.repo.js';
import type { ShippingApp } from './app-rates.js';
import type { StoreAddress } from '../stores/store-address.js';
import type { StoredZone } from './zone-rates.js';

/** A store's set as of `version`: every zone of the store (a quote keeps its destination's). */
export interface StoreCheckoutConfig {
  storeId: string;
  version: string;
  zones: readonly StoredZone[];
  apps: readonly ShippingApp[];
  origin: StoreAddress;
  functions: readonly StoreFunctionRow[];
}

/** Stores remembered; the least recently quoted go first. */
export const STORE_CONFIGS_KEPT = 2_000;

/** By store slug. */
export class StoreConfigCache extends Lru<string, StoreCheckoutConfig> {
  constructor(capacity = STORE_CONFIGS_KEPT) {
    super(capacity);
  }
}

/** The zones holding the destination country, as `findZonesForCountry` finds them. */
export function zonesForCountry(zones: readonly StoredZone[], country: unknown): StoredZone[] {
  const code = alpha2(country);
  if (!code) return [];
  return zones.filter((z) => Array.isArray(z.countries) && (z.countries as unknown[]).includes(code));
}
