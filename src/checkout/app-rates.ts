// TEMPORARY stub until h-rates lands (deleted before that merge).
import type { Deps } from '../deps.js';
import type { ShippingRate } from './rate.js';
export async function quoteAppRates(_deps: Deps, _q: unknown): Promise<ShippingRate[]> {
  return [];
}
