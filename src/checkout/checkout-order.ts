// The order a checkout makes (C15.1), as completion (checkout.service.ts) takes it: what it still
// needs, the rate chosen among those offered, the input `POST /orders` would take for it, and
// whether the order placed shows what the checkout was priced at. Pure: no reads, no writes.
import type { LineInput, NewOrderInput, PaymentMethod } from '../orders/order-input.js';
import type { OrderRow } from '../orders/order-view.js';
import { minorOf } from './checkout-state.js';
import type { CheckoutState } from './checkout-view.js';
import type { ShippingRate } from './shipping-rates.js';

/**
 * Whether an offered rate is the one the buyer chose: its handle and its app. One offer never holds
 * two rates with one handle, but `app-{app_handle}-{service_code}` is not one-to-one across apps
 * (app `a-b`'s code `c`, app `a`'s code `b-c`): by the time of completion the rate chosen may be
 * gone and another app's rate hold its handle, which is not the buyer's choice.
 */
export const isChosenRate = (offered: ShippingRate, chosen: { handle: string; source: string | null }) =>
  offered.handle === chosen.handle && offered.source === (chosen.source ?? null);

/** What completion still needs, in the buyer's words (422 when anything is missing). */
export function missingForCompletion(state: CheckoutState, rates: ShippingRate[]): string[] {
  const { row } = state;
  const missing: string[] = [];
  if (!state.lines.length) missing.push('line items');
  if (!row.email) missing.push('an email');
  if (state.requiresShipping) {
    if (!row.shipping_address) missing.push('a shipping address');
    if (!row.shipping_rate) missing.push('a shipping rate');
    else if (!rates.some((r) => isChosenRate(r, row.shipping_rate!))) missing.push('a shipping rate that is still offered');
  }
  if (!row.payment_method) missing.push('a payment method');
  else if (!state.paymentMethods.some((m) => m.handle === row.payment_method)) missing.push('a payment method that is still offered');
  return missing;
}

/** The order `POST /orders` would take for this checkout (C15.1). */
export function orderInputOf(state: CheckoutState, rate: ShippingRate | null): NewOrderInput {
  const { row } = state;
  const lines: LineInput[] = row.line_items.map((l, i) => ({
    label: `line_items[${i}]`, productRef: l.product_id, variantRef: l.variant_id, quantity: l.quantity, properties: [], title: null, priceMinor: null,
  }));
  const address = row.shipping_address ?? {};
  return {
    customer: null,
    email: row.email,
    phone: address.phone ?? null,
    lines,
    shippingAddress: address,
    billingAddress: null,
    shippingLine: rate ? { title: rate.title, code: rate.code, source: rate.source, price: rate.price, handle: rate.handle } : null,
    shippingMinor: rate ? minorOf(rate.price) : 0,
    discountCode: row.discount_code,
    taxRatePpm: null,
    paymentMethod: row.payment_method as PaymentMethod,
    note: row.note,
    tags: [],
    currency: row.currency,
    attributes: [],
    automaticDiscounts: state.automatic.map((a) => ({ title: a.title, value: a.value, valueType: a.valueType, lineAmountsMinor: a.lineAmountsMinor })),
  };
}

/** Whether the order placed shows what the checkout was priced at: each line, and every total. */
export function orderIsAsPriced(order: OrderRow, state: CheckoutState): boolean {
  const { totals, lines } = state;
  const sameLines = order.line_items.length === lines.length && order.line_items.every((l, i) =>
    l.price_minor === lines[i].unitMinor && l.quantity === lines[i].quantity && l.title === lines[i].title && l.variant_title === lines[i].variantTitle && l.sku === lines[i].sku);
  return sameLines &&
    order.subtotal_minor === totals.subtotalMinor && order.discount_minor === totals.totalDiscountMinor &&
    order.shipping_minor === totals.shippingMinor && order.tax_minor === totals.taxMinor && order.total_minor === totals.totalMinor;
}
