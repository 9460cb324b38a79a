// The store's functions run on one checkout, as its create, change, quote and completion
// (checkout.service.ts) run them: who they run for, the cart functions on the checkout as priced,
// and the shipping rates it offers after the delivery functions (C11.4).
import type { Deps } from '../deps.js';
import { runCartFunctions, shapeRates, type ActiveFunctions, type FunctionCheckout } from './checkout-functions.js';
import { finishState, type PricedCheckout } from './checkout-state.js';
import { checkoutView, type CheckoutState } from './checkout-view.js';
import type { CheckoutRow, CheckoutStore } from './checkouts.repo.js';
import { paymentMethodsOf } from './payment-methods.js';
import { quoteShippingRates, type RateSources, type ShippingRate } from './shipping-rates.js';

/** Who the functions run for: the checkout, and `input.shop` (C11.3). */
export const functionCall = (store: CheckoutStore, row: CheckoutRow, token: string): FunctionCheckout => ({
  storeId: store.id,
  shop: { id: store.id, domain: store.slug, currency: store.currency },
  checkoutId: row.id,
  token,
});

/**
 * Runs the cart functions on the checkout as priced (C11.4): what they give, and the checkout with it.
 * No active function: nothing runs, and the checkout is as priced.
 */
export async function withCartFunctions(deps: Deps, call: FunctionCheckout, active: ActiveFunctions, priced: PricedCheckout) {
  const before = finishState(priced, null);
  const results = await runCartFunctions(deps, call, active, checkoutView(call.token, before), paymentMethodsOf());
  return { results, state: results ? finishState(priced, results) : before };
}

/**
 * The shipping rates offered for the checkout now (C15.2, C15.3, after the delivery functions of
 * C11.3); none when nothing ships or there is no address. `sources`: the zones and apps when
 * already read (`findCheckoutForQuote`).
 */
export async function ratesOf(deps: Deps, call: FunctionCheckout, active: ActiveFunctions, state: CheckoutState, sources?: RateSources): Promise<ShippingRate[]> {
  const destination = state.row.shipping_address;
  if (!state.requiresShipping || !destination) return [];
  const rates = await quoteShippingRates(deps, { storeId: state.row.store_id, checkoutKey: state.row.token_hash, currency: state.row.currency, destination, lines: state.lines, subtotalMinor: state.totals.subtotalMinor, sources });
  // C11.4: the delivery-option functions shape them every time; a hidden rate cannot be chosen.
  return shapeRates(deps, call, active, () => checkoutView(call.token, state), rates);
}
