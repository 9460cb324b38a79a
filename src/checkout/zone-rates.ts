// Merchant zone rates (C15.2): a pure function of the store's zones as stored, the lines, the
// subtotal and the destination country. No database and no clock, so the checkout can call it on
// every quote and the tests can sweep its bounds.
import type { Queryable } from '../db/db.js';
import type { ZoneRow } from '../shipping/zones.js';
import { formatMinor } from '../money.js';
import { alpha2 } from '../shipping/countries.js';
import type { ShippingRate } from './rate.js';
import { add, compare, kgOf, parseDecimal, times, ZERO, type Decimal } from './weights.js';
import { byBytes } from './text-order.js';
import { fitsMinorUnits } from '../currencies.js';

/** The stored zone fields a rate depends on. */
export type StoredZone = Pick<ZoneRow, 'id' | 'name' | 'countries' | 'description' | 'price_minor' | 'type' | 'min_weight' | 'max_weight' | 'min_price' | 'max_price'>;

export interface ZoneLine {
  quantity: number;
  /** The variant's weight per unit and its unit (g, kg, lb, oz), as stored; null when unknown. */
  weight: string | number | null;
  weightUnit: string | null;
  requiresShipping: boolean;
}

export interface ZoneQuote {
  zones: StoredZone[];
  lines: ZoneLine[];
  /** The checkout's subtotal in minor units (hundredths). */
  subtotalMinor: number;
  /** The shipping address's `country_code`; null (no address) gives no rates. */
  country: string | null;
  /**
   * The store's currency (ISO 4217). A zone whose price is not a whole number of its minor units
   * (5.50 in a yen store) is not offered: no order can charge it (C7.1 refuses such a shipping
   * price), so the checkout could never complete with it. Without: every price is taken.
   */
  currency?: string;
}

/** The weight C15.2's Weight zones bound: lines that require shipping, in kg, exactly. */
export function shippingWeightKg(lines: ZoneLine[]): Decimal {
  return lines
    .filter((l) => l.requiresShipping)
    .reduce((sum, l) => add(sum, times(kgOf(l.weight, l.weightUnit), { units: BigInt(l.quantity), scale: 0 })), ZERO);
}

/** `min <= value <= max`, a null (or unreadable) bound being open. */
function within(value: Decimal, min: string | number | null, max: string | number | null): boolean {
  const lo = parseDecimal(min);
  const hi = parseDecimal(max);
  return (!lo || compare(value, lo) >= 0) && (!hi || compare(value, hi) <= 0);
}

/**
 * The rates of every zone that holds the destination country and whose condition holds, cheapest
 * first (then by title and handle, by bytes as text-order.ts says, so the order is stable). None when no line requires shipping
 * or there is no destination.
 */
export function zoneRates(quote: ZoneQuote): ShippingRate[] {
  const country = alpha2(quote.country);
  if (!country || !quote.lines.some((l) => l.requiresShipping)) return [];
  const weight = shippingWeightKg(quote.lines);
  const subtotal: Decimal = { units: BigInt(quote.subtotalMinor), scale: 2 };
  const holds = (z: StoredZone) =>
    z.type === 'Simple' ||
    (z.type === 'Weight' && within(weight, z.min_weight, z.max_weight)) ||
    (z.type === 'Price' && within(subtotal, z.min_price, z.max_price));
  const chargeable = (z: StoredZone) => quote.currency === undefined || fitsMinorUnits(Number(z.price_minor), quote.currency);
  return quote.zones
    .filter((z) => z.countries.includes(country) && holds(z) && chargeable(z))
    .sort((a, b) => Number(a.price_minor) - Number(b.price_minor) || byBytes(a.name, b.name) || byBytes(a.id, b.id))
    .map((z) => ({
      handle: `zone-${z.id}`,
      title: z.name,
      price: formatMinor(Number(z.price_minor))!,
      code: z.name,
      source: null,
      description: z.description || null,
      min_delivery_date: null,
      max_delivery_date: null,
    }));
}

/** The store's zones that hold `country` (the only ones `zoneRates` can use), for the checkout to pass in. */
export async function findZonesForCountry(q: Queryable, storeId: string, country: string | null): Promise<StoredZone[]> {
  const code = alpha2(country);
  if (!code) return [];
  const { rows } = await q.query<StoredZone>(
    `SELECT id, name, countries, description, price_minor, type, min_weight, max_weight, min_price, max_price
       FROM shipping_zones WHERE store_id = $1 AND countries @> jsonb_build_array($2::text)`,
    [storeId, code],
    { name: 'checkout_zones_for_country' },
  );
  return rows;
}
