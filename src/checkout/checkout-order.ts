// The order a checkout makes (C15.1), as completion (checkout.service.ts) takes it: what it still
// needs, the rate chosen among those offered, whether the rate and the functions' results of now
// still make what the checkout shows, the input `POST /orders` would take for it, and whether the
// order placed shows what the checkout was priced at. Pure: no reads, no writes.
import { isDeepStrictEqual } from 'node:util';
import { formatMinor } from '../money.js';
import { AppError } from '../http/errors.js';
import type { LineInput, NewOrderInput, PaymentMethod } from '../orders/order-input.js';
import type { Address, OrderRow } from '../orders/order-view.js';
import { CUSTOMER_PHONE_MAX } from '../customers/customer-fields.js';
import { longerThan } from '../text.js';
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

/**
 * What the order copies of its rate (C15.1: `shipping_lines[0]` = the chosen rate's `title`,
 * `code`, `source`, `price`; `shipping_methods[].handle`, which `isChosenRate` already holds equal).
 * `description` and the delivery dates are not among them: the order shows neither, and an app's
 * dates move with the day its answer is asked, which is no change of what the buyer is charged or
 * of what the order says.
 */
const ORDER_RATE_FIELDS = ['title', 'code', 'source', 'price'] as const;

/** One way the chosen rate is offered otherwise now than the checkout shows it. */
export interface RateChange {
  field: (typeof ORDER_RATE_FIELDS)[number];
  was: string | null;
  now: string | null;
}

/**
 * How the rate offered now under the chosen one's handle and app differs, in what the order copies,
 * from the rate as chosen (the checkout's `shipping_line`); none when the order would be the same.
 * Prices are compared as amounts ("9.0" is "9.00").
 */
export function rateChangesOf(chosen: ShippingRate, offered: ShippingRate): RateChange[] {
  return ORDER_RATE_FIELDS.flatMap((field): RateChange[] => {
    const was = chosen[field] ?? null;
    const now = offered[field] ?? null;
    const same = field === 'price' ? minorOf(was!) === minorOf(now!) : was === now;
    return same ? [] : [{ field, was, now }];
  });
}

/**
 * Whether two states of one checkout (priced alike, with two runs' results) charge alike and make
 * the same order's discounts: every total (line by line too), the discount applications shown, and
 * the automatic discounts the order copies (title, value, what each line takes).
 */
export const sameCharge = (a: CheckoutState, b: CheckoutState) =>
  isDeepStrictEqual(a.totals, b.totals) && isDeepStrictEqual(a.discounts, b.discounts) && isDeepStrictEqual(a.automatic, b.automatic);

/** The words of a 422 for a charge that changed (`sameCharge` false): the totals, else the discounts. */
export function chargeChangeOf(shown: CheckoutState, now: CheckoutState): { message: string; fields: Record<string, string[]> } {
  const money = (minor: number) => formatMinor(minor)!;
  const discounts = shown.totals.totalDiscountMinor === now.totals.totalDiscountMinor
    ? ''
    : ` (its discounts from ${money(shown.totals.totalDiscountMinor)} to ${money(now.totals.totalDiscountMinor)})`;
  if (shown.totals.totalMinor !== now.totals.totalMinor) {
    return {
      message: `The checkout's total changed from ${money(shown.totals.totalMinor)} to ${money(now.totals.totalMinor)}${discounts}; the checkout shows it now: complete it again to accept it`,
      fields: { total_price: ['changed'] },
    };
  }
  return {
    message: `The checkout's discounts changed${discounts}; the checkout shows them now: complete it again to accept them`,
    fields: { discount_applications: ['changed'] },
  };
}

/** What completion still needs, in the buyer's words (422 when anything is missing). */
export function missingForCompletion(state: CheckoutState, rates: ShippingRate[]): string[] {
  const { row } = state;
  const missing: string[] = [];
  // Lines asked for but left out (unavailable now, or priced as the currency cannot hold) are
  // validation errors, whose own words the 422 then carries: "needs line items" would name nothing
  // the checkout shows.
  if (!row.line_items.length) missing.push('line items');
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
  // A checkout that needs no shipping may have no address: the order has none either (null, not
  // an address of nulls that an app would take for one).
  const address = row.shipping_address ?? null;
  return {
    customer: row.email ? { email: row.email, raw: customerOfAddress(address) } : null,
    email: row.email,
    phone: address?.phone ?? null,
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

/**
 * The buyer as `POST /orders` takes a customer (C7.1 `customer: { email, first_name, last_name,
 * phone }`): the name and phone of the shipping address, which is all a checkout asks of the buyer.
 * They name a new customer only (an existing one is linked as it is). A phone longer than a
 * customer's (64) is left off the customer rather than failing the order; the order keeps it.
 */
function customerOfAddress(address: Partial<Address> | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (address?.first_name) out.first_name = address.first_name;
  if (address?.last_name) out.last_name = address.last_name;
  if (address?.phone && !longerThan(address.phone, CUSTOMER_PHONE_MAX)) out.phone = address.phone;
  return out;
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

/** The fields of those refusals of the order that a checkout's pricing shows as validation errors. */
const PRICED_FIELD = /^(discount_code|line_items\[\d+\]\.(product_id|variant_id|price))$/;

/**
 * A refusal of the order (`placeOrderInTx`, the 400s of `POST /orders`) that the checkout, priced
 * again, shows as a validation error: its discount code (used up, expired, or used by this buyer as
 * often as allowed since it was priced: the last use taken by another order meanwhile) or a line
 * (its product gone, or priced as the currency cannot hold). The checkout was priced without them,
 * so something changed meanwhile: completion starts over, and the checkout as it now stands answers
 * the 422 of C15.1 with its validation errors. Short stock (`.quantity`) stays the 400 of C7.1.
 */
export function refusedAsPricedNow(err: unknown): boolean {
  if (!(err instanceof AppError) || err.status !== 400 || !err.fields) return false;
  const fields = Object.keys(err.fields);
  return fields.length > 0 && fields.every((f) => PRICED_FIELD.test(f));
}
