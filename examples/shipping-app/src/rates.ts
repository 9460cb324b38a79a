// What this app charges (C15.3): two services priced from the parcel's weight and how far it goes.
// A real carrier app would ask its carrier here; the shape of the answer is what matters.
import { toMinorUnits, type RateOffer, type RateRequest } from '@svc/app-sdk';

/** Where a parcel goes, seen from the store's country. */
export type Reach = 'domestic' | 'europe' | 'world';

const EUROPE = new Set(['AT', 'BE', 'CH', 'DE', 'DK', 'ES', 'FI', 'FR', 'GB', 'IE', 'IT', 'LU', 'NL', 'NO', 'PL', 'PT', 'SE']);

/** Base price and price per started kilogram, in the currency's major units; days to deliver. */
const SERVICES = [
  { code: 'standard', name: 'Example Shipping Standard', base: { domestic: 5.9, europe: 9.9, world: 14.9 }, perKg: 0.5, days: [3, 5] },
  { code: 'express', name: 'Example Shipping Express', base: { domestic: 12.9, europe: 24.9, world: 39.9 }, perKg: 1.5, days: [1, 2] },
] as const;

export function reachOf(origin: string | null, destination: string | null): Reach {
  if (!destination) return 'world';
  if (origin && origin.toUpperCase() === destination.toUpperCase()) return 'domestic';
  return EUROPE.has(destination.toUpperCase()) ? 'europe' : 'world';
}

/** Grams of the items that need shipping (the request gives grams per unit). */
export function parcelGrams(request: RateRequest): number {
  return request.rate.items.filter((i) => i.requires_shipping).reduce((sum, i) => sum + i.grams * i.quantity, 0);
}

const addDays = (now: Date, days: number) => new Date(now.getTime() + days * 86_400_000).toISOString().slice(0, 10);

/**
 * The offers for a rate request: the same figures in whatever currency the store uses (this example
 * converts nothing), as integers in that currency's minor units, as C15.3 asks.
 */
export function quote(request: RateRequest, now = new Date()): RateOffer[] {
  const { origin, destination, currency } = request.rate;
  const reach = reachOf(origin.country, destination.country);
  const startedKg = Math.ceil(parcelGrams(request) / 1000);
  return SERVICES.map((s) => ({
    service_name: s.name,
    service_code: s.code,
    // The platform's minor units (ISO 4217's: 2 decimals for HUF, where Intl says 0).
    total_price: toMinorUnits(s.base[reach] + s.perKg * startedKg, currency),
    currency,
    description: `${s.days[0]} to ${s.days[1]} business days, tracked`,
    min_delivery_date: addDays(now, s.days[0]),
    max_delivery_date: addDays(now, s.days[1]),
  }));
}
