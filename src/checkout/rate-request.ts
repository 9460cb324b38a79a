// The body of a shipping rate request (C15.3), built once per quote: its exact bytes are signed,
// sent to every shipping app of the store, and hashed as the cache key, so every field is written
// in a fixed order and every unknown value is null (never left out).
import { sha256Hex } from '../crypto.js';
import { ADDRESS_FIELDS, type StoreAddress } from '../stores/store-address.js';
import { ADDRESS_KEYS, type AddressKey } from '../orders/order-view.js';
import type { PricedLine } from './checkout-lines.js';
import { toCurrencyMinor } from './currency-minor.js';

/** The buyer's shipping address in the order's address fields (app-api.md Order). */
export type ShippingAddress = Partial<Record<AddressKey, string | null>>;

export interface RateItem {
  name: string;
  sku: string | null;
  quantity: number;
  /** Per unit, whole grams (src/checkout/weights.ts `gramsPerUnit`). */
  grams: number;
  /** Per unit, in hundredths (the service's minor units). */
  priceMinor: number;
  requiresShipping: boolean;
  /** The App API's integer ids, as in `orders/create`; a product without variants has no variant id. */
  productId: number | null;
  variantId: number | null;
}

export interface RateRequest {
  origin: StoreAddress;
  destination: ShippingAddress;
  items: RateItem[];
  currency: string;
}

/** A checkout's priced lines as the request's items (every line; each says whether it ships). */
export function rateItemsOf(lines: readonly PricedLine[]): RateItem[] {
  return lines.map((l) => ({
    name: l.variantTitle ? `${l.title} - ${l.variantTitle}` : l.title,
    sku: l.sku,
    quantity: l.quantity,
    grams: l.grams,
    priceMinor: l.unitMinor,
    requiresShipping: l.requiresShipping,
    productId: l.productNumId,
    variantId: l.variantNumId,
  }));
}

/** Whether a quote asks the apps at all: something ships, to a country. */
export const asksApps = (destination: ShippingAddress, items: readonly RateItem[]): boolean =>
  Boolean(destination.country_code) && items.some((i) => i.requiresShipping);

/** The request a quote sends: the currency as ISO 4217 writes it. */
export const rateRequestOf = (origin: StoreAddress, destination: ShippingAddress, items: RateItem[], currency: string): RateRequest =>
  ({ origin, destination, items, currency: currency.toUpperCase() });

/**
 * The SHA-256 (hex) of the body a quote of these facts would send now, the shared cache's key
 * (rate-cache.ts); null when a quote would ask no app. A checkout keeps it from its last change
 * (`checkouts.rate_body_sha256`), so its quote can read the cache's answers with the checkout.
 */
export function rateBodySha256Of(origin: StoreAddress, destination: ShippingAddress | null, lines: readonly PricedLine[], currency: string): string | null {
  const items = rateItemsOf(lines);
  if (!destination || !asksApps(destination, items)) return null;
  return sha256Hex(rateRequestBody(rateRequestOf(origin, destination, items, currency)));
}

const text = (value: string | null | undefined) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

export function rateRequestBody(r: RateRequest): string {
  const d = r.destination;
  const name = [text(d.first_name), text(d.last_name)].filter((part) => part !== null).join(' ');
  return JSON.stringify({
    rate: {
      origin: {
        country: r.origin.country,
        province: r.origin.province,
        city: r.origin.city,
        zip: r.origin.zip,
        address1: r.origin.address1,
        address2: r.origin.address2,
        phone: r.origin.phone,
      },
      destination: {
        country: text(d.country_code)?.toUpperCase() ?? null,
        province: text(d.province_code) ?? text(d.province),
        city: text(d.city),
        zip: text(d.zip),
        address1: text(d.address1),
        address2: text(d.address2),
        name: name || null,
        company: text(d.company),
        phone: text(d.phone),
      },
      items: r.items.map((i) => ({
        name: i.name,
        sku: i.sku,
        quantity: i.quantity,
        grams: i.grams,
        price: toCurrencyMinor(i.priceMinor, r.currency),
        requires_shipping: i.requiresShipping,
        product_id: i.productId,
        // As in orders/create: a product without variants is its own variant.
        variant_id: i.variantId ?? i.productId,
      })),
      currency: r.currency,
      locale: 'en',
    },
  });
}

/**
 * What a request's body is made of, as a flat list of values in a fixed order: every field of the
 * origin, of the destination and of each item, used by the body or not, and the currency. Two
 * requests whose lists are equal value by value (`sameInputs`) have the same body, so a caller can
 * tell that a body would come out the same without building it (rate-memo.ts `lastQuote`); the list
 * holds no object, so keeping it copies nothing a caller could change afterwards.
 */
export function rateRequestInputs(r: RateRequest): readonly unknown[] {
  const inputs: unknown[] = [r.currency];
  for (const key of ADDRESS_FIELDS) inputs.push(r.origin[key]);
  for (const key of ADDRESS_KEYS) inputs.push(r.destination[key]);
  // Eight values an item, so the list's length also tells how many items there are.
  for (const i of r.items) inputs.push(i.name, i.sku, i.quantity, i.grams, i.priceMinor, i.requiresShipping, i.productId, i.variantId);
  return inputs;
}

/** Two lists equal value by value (`===`). */
export function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
