// The example apps' rates (C15.3): by the parcel's weight and whether it crosses a border. Prices
// are integers in minor units of the request's currency.
import type { RateOffer, RateRequest } from '@svc/app-sdk';

export function ratesFor(rate: RateRequest['rate']): RateOffer[] {
  const grams = rate.items.filter((i) => i.requires_shipping).reduce((sum, i) => sum + i.grams * i.quantity, 0);
  if (grams === 0) return []; // nothing to ship
  const domestic = rate.origin.country !== null && rate.origin.country === rate.destination.country;
  const perHalfKilo = Math.ceil(grams / 500) * 100;
  return [
    { service_name: 'Standard', service_code: 'standard', total_price: (domestic ? 500 : 1500) + perHalfKilo, currency: rate.currency, description: domestic ? '2 to 4 days' : '5 to 10 days' },
    { service_name: 'Express', service_code: 'express', total_price: (domestic ? 1200 : 3500) + 2 * perHalfKilo, currency: rate.currency, description: domestic ? 'next day' : '2 to 3 days' },
  ];
}
