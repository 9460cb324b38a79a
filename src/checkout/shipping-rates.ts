// The shipping rates a checkout offers (C15.1 `shipping_rates`): the merchant's zone rates (C15.2)
// and every shipping app's live rates (C15.3), asked at the same time. Zones come first, cheapest
// first; then each app's rates in the order the app gave them. An app that is slow, down or wrong
// gives no rates and costs at most its timeout (src/checkout/app-rates.ts); the zones never wait
// on it beyond that.
import type { Deps } from '../deps.js';
import type { Address } from '../orders/order-view.js';
import { quoteAppRates, type ShippingApps } from './app-rates.js';
import type { PricedLine } from './checkout-lines.js';
import type { AnswersReadWithCheckout } from './rate-cache.js';
import { rateItemsOf } from './rate-request.js';
import type { ShippingRate } from './rate.js';
import { findZonesForCountry, zoneRates, type StoredZone } from './zone-rates.js';

export type { ShippingRate } from './rate.js';

export interface RateQuestion {
  storeId: string;
  /** The checkout quoted (its token hash), if any (app-rates.ts reuses its last quote while nothing changed). */
  checkoutKey?: string;
  currency: string;
  destination: Partial<Address>;
  lines: PricedLine[];
  /** The lines after discounts, in hundredths: what Price zones bound. */
  subtotalMinor: number;
  /** The store's zones for the destination country and its shipping apps, when already read; else read here. */
  sources?: RateSources;
}

export interface RateSources {
  zones: StoredZone[];
  shipping: ShippingApps;
  /** The shared cache's answers read with the checkout (app-rates.ts). */
  cached?: AnswersReadWithCheckout | null;
}

export async function quoteShippingRates(deps: Deps, q: RateQuestion): Promise<ShippingRate[]> {
  const country = q.destination.country_code ?? null;
  if (!country || !q.lines.some((l) => l.requiresShipping)) return [];
  // The store's set already read and no shipping app in it: the zones alone, with nothing to wait for.
  if (q.sources && !q.sources.shipping.apps.length) return pricedZones(q, country, q.sources.zones);
  const appQuote = {
    storeId: q.storeId,
    checkoutKey: q.checkoutKey,
    currency: q.currency,
    destination: q.destination,
    shipping: q.sources?.shipping,
    cached: q.sources?.cached,
    items: rateItemsOf(q.lines),
  };
  // The zones already read: priced at once, and only the apps are waited for.
  if (q.sources) {
    const fromZones = pricedZones(q, country, q.sources.zones);
    return [...fromZones, ...(await quoteAppRates(deps, appQuote))];
  }
  const zones = findZonesForCountry(deps.db, q.storeId, country).then((found) => pricedZones(q, country, found));
  const apps = quoteAppRates(deps, appQuote);
  const [fromZones, fromApps] = await Promise.all([zones, apps]);
  return [...fromZones, ...fromApps];
}

/** The zones' rates for this question (C15.2). A function of the module, not a closure per quote: this is on every quote's path. */
function pricedZones(q: RateQuestion, country: string, found: StoredZone[]): ShippingRate[] {
  return zoneRates({
    zones: found,
    lines: q.lines.map((l) => ({ quantity: l.quantity, weight: l.weight, weightUnit: l.weightUnit, requiresShipping: l.requiresShipping })),
    subtotalMinor: q.subtotalMinor,
    country,
    currency: q.currency,
  });
}
