// The checkout as the storefront sees it (C15.1), and its schema (the response is serialised
// through it, src/http/serialization.ts). Amounts are decimal strings (C5.2); a line's `price` and
// `grams` are per unit.
import { Type, type Static } from 'typebox';
import { formatMinor } from '../money.js';
import { Money, nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { ADDRESS_KEYS, addressView, type Address } from '../orders/order-view.js';
import { totalsTooLarge, type OrderTotals } from '../orders/pricing.js';
import type { CheckoutRow } from './checkouts.repo.js';
import type { PricedLine, ValidationProblem } from './checkout-lines.js';
import { ShippingRateSchema } from './rate.js';
import type { PaymentMethodOffer } from './payment-methods.js';
import type { AutomaticDiscount } from '../functions/operations.js';

const money = (minor: number) => formatMinor(minor)!;

/**
 * The checkout's sums as the storefront and its functions see them. Past MAX_ORDER_MINOR (a chosen
 * app rate near 2^53 hundredths, a price raised under the lines) a number's sum is rounded, and the
 * total of 1,250 hundredths of lines and a rate of 2^53 - 1 was shown a cent short. Such a checkout
 * cannot complete (its validation error says so), but what it shows still adds up, to the cent: the
 * sums of the lines' exact figures, in bigint.
 */
function sums(totals: OrderTotals): { subtotal: string; discounts: string; total: string } {
  if (!totalsTooLarge(totals)) return { subtotal: money(totals.subtotalMinor), discounts: money(totals.totalDiscountMinor), total: money(totals.totalMinor) };
  const subtotal = totals.lines.reduce((s, l) => s + BigInt(l.finalLineMinor), 0n);
  const discounts = totals.lines.reduce((s, l) => s + BigInt(l.discountMinor), BigInt(totals.shippingDiscountMinor));
  return { subtotal: formatMinor(subtotal), discounts: formatMinor(discounts), total: formatMinor(subtotal + BigInt(totals.shippingMinor) + BigInt(totals.taxMinor)) };
}

const AddressSchema = Type.Object(
  Object.fromEntries(ADDRESS_KEYS.map((key) => [key, nullable(Type.String())])) as Record<(typeof ADDRESS_KEYS)[number], ReturnType<typeof nullable<ReturnType<typeof Type.String>>>>,
);

export const CheckoutSchema = Type.Object({
  token: Type.String({ description: "the checkout's only key: keep it secret" }),
  email: nullable(Type.String()),
  currency: Type.String({ description: "the store's currency (ISO 4217)" }),
  line_items: Type.Array(Type.Object({
    id: Type.String(),
    product_id: Type.Integer(),
    variant_id: Type.Integer({ description: "the variant's numeric id (the product's for a product without variants, as on orders)" }),
    title: Type.String(),
    variant_title: nullable(Type.String()),
    sku: nullable(Type.String()),
    quantity: Type.Integer(),
    price: Money('per unit'),
    line_price: Money('price x quantity'),
    grams: Type.Integer({ description: 'per unit' }),
    requires_shipping: Type.Boolean(),
  })),
  requires_shipping: Type.Boolean(),
  shipping_address: nullable(AddressSchema),
  shipping_line: nullable(ShippingRateSchema),
  discount_code: nullable(Type.String()),
  discount_applications: Type.Array(Type.Object({
    type: StringEnum(['discount_code', 'automatic'] as const),
    code: nullable(Type.String()),
    title: Type.String(),
    value: Type.String(),
    value_type: StringEnum(['percentage', 'fixed_amount'] as const),
    amount: Money(),
  })),
  payment_methods: Type.Array(Type.Object({ handle: Type.String(), title: Type.String() })),
  payment_method: nullable(Type.String()),
  validation_errors: Type.Array(Type.Object({ message: Type.String(), target: Type.String() })),
  subtotal_price: Money('the lines after discounts'),
  total_discounts: Money(),
  shipping_price: Money(),
  tax_price: Money(),
  total_price: Money(),
  order_id: nullable(Type.String()),
  completed_at: nullable(Timestamp()),
  expires_at: Timestamp(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

export type CheckoutView = Static<typeof CheckoutSchema>;

/** What is known about a checkout once its lines are priced and its discount applied. */
export interface CheckoutState {
  row: CheckoutRow;
  lines: PricedLine[];
  problems: ValidationProblem[];
  totals: OrderTotals;
  /** The discount code's application, then the automatic discounts of the functions (C11.3). */
  discounts: CheckoutView['discount_applications'];
  /** The automatic discounts, line by line: what the order takes with them. */
  automatic: AutomaticDiscount[];
  paymentMethods: PaymentMethodOffer[];
  requiresShipping: boolean;
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export function checkoutView(token: string, s: CheckoutState): CheckoutView {
  const { row, totals } = s;
  const shown = sums(totals);
  return {
    token,
    email: row.email,
    currency: row.currency,
    line_items: s.lines.map((l, i) => ({
      id: l.id,
      product_id: l.productNumId,
      variant_id: l.variantNumId ?? l.productNumId,
      title: l.title,
      variant_title: l.variantTitle,
      sku: l.sku,
      quantity: l.quantity,
      price: money(l.unitMinor),
      line_price: money(totals.lines[i].lineMinor),
      grams: l.grams,
      requires_shipping: l.requiresShipping,
    })),
    requires_shipping: s.requiresShipping,
    shipping_address: addressView(row.shipping_address as Partial<Address> | null),
    // Only while something ships (checkout.service.ts finishState): what completion would charge.
    shipping_line: s.requiresShipping ? row.shipping_rate : null,
    discount_code: row.discount_code,
    discount_applications: s.discounts,
    payment_methods: s.paymentMethods,
    payment_method: row.payment_method,
    validation_errors: s.problems,
    subtotal_price: shown.subtotal,
    total_discounts: shown.discounts,
    shipping_price: money(totals.shippingMinor),
    tax_price: money(totals.taxMinor),
    total_price: shown.total,
    order_id: row.order_id,
    completed_at: iso(row.completed_at),
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
