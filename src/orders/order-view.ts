// The shapes of an order (app-api.md Order): the App API's full view and list view, the
// `orders/create` body (Payload conventions), and the merchant admin record (C7.1). All built from
// one row that carries its line items, customer, transactions and metafields as JSON
// (orders.repo.ts: one round trip per read). Their response schemas are in order-schema.ts.
//
// Line items name products and variants by the App API's integer ids, the same ids as the product
// object (`id`, `variants[].id`); `variant_id` falls back to the product's id for a product without
// variants (Payload conventions). Custom line items (no product) carry null for both.
import { formatMinor } from '../money.js';
import { splitName } from '../customers/customer-fields.js';
import { metafieldsView, type MetafieldsShown } from './order-metafields.js';
import { hundredthsStep } from '../currencies.js';
import { finalUnitMinor, formatTaxRate, parseTaxRate, type AppliedDiscount } from './pricing.js';
import type { StoredAutomaticDiscount } from './orders.repo.js';

export const ADDRESS_KEYS = [
  'first_name', 'last_name', 'company', 'address1', 'address2', 'city', 'province', 'province_code', 'country', 'country_code', 'zip', 'phone',
] as const;
export type AddressKey = (typeof ADDRESS_KEYS)[number];
export type Address = Record<AddressKey, string | null>;

/** As stored on the order: `price` is the shipping line's price before any FreeShipping discount. */
export interface ShippingLine {
  title: string | null;
  code: string | null;
  source: string | null;
  price: string;
  /**
   * The handle of the rate the buyer chose at checkout (`zone-{id}`, `app-{app}-{code}`, C15.2,
   * C15.3): what the rates, the buyer's choice and delivery functions name it by. Absent on orders
   * made by `POST /orders` (no rate was offered) and on those stored before it was kept.
   */
  handle?: string | null;
}

export interface LineJson {
  id: string;
  product_id: string | null;
  variant_id: string | null;
  product_num_id: number | null;
  variant_num_id: number | null;
  title: string;
  variant_title: string | null;
  sku: string | null;
  quantity: number;
  price_minor: number;
  total_discount_minor: number;
  properties: [string, string][];
  requires_shipping: boolean;
  taxable: boolean;
  stock_deducted: boolean;
  fulfilled_quantity: number;
  position: number;
}

export interface CustomerJson {
  id: string;
  email: string;
  name: string;
  phone: string | null;
}

export interface TransactionJson {
  id: string;
  kind: 'sale' | 'refund';
  status: 'pending' | 'success';
  gateway: string | null;
  amount_minor: number;
  created_at: string;
}

export interface OrderRow {
  id: string;
  store_id: string;
  order_number: number;
  email: string | null;
  phone: string | null;
  status: (typeof MERCHANT_STATUSES)[number];
  financial_status: (typeof FINANCIAL_STATUSES)[number];
  fulfillment_status: (typeof FULFILLMENT_STATUSES)[number];
  cancelled_at: string | null;
  cancel_reason: string | null;
  currency: string;
  subtotal_minor: number;
  tax_minor: number;
  tax_rate: string | null;
  shipping_minor: number;
  discount_minor: number;
  total_minor: number;
  refunded_minor: number;
  paid_minor: number;
  payment_method: string | null;
  discount: AppliedDiscount | null;
  automatic_discounts: StoredAutomaticDiscount[];
  shipping_address: Partial<Address> | null;
  billing_address: Partial<Address> | null;
  shipping_line: ShippingLine | null;
  attributes: unknown[];
  note: string | null;
  tags: string[];
  courier_name: string | null;
  tracking_number: string | null;
  tracking_url: string | null;
  digital_data: string | null;
  delivery_date: string | null;
  shipped_date: string | null;
  staff_id: string | null;
  confirmation_number: string;
  processed_at: string;
  created_at: string;
  updated_at: string;
  slug: string;
  customer: CustomerJson | null;
  line_items: LineJson[];
  /** Only on the full read. */
  transactions?: TransactionJson[];
  /** Only on the full read: [namespace, key, type, raw value]. */
  metafields?: [string, string, string, string][];
}

const money = (minor: number) => formatMinor(minor)!;
/** Timestamps come from SQL as ISO 8601 UTC text already (orders.repo.ts); anything else is normalised. */
function iso(d: Date | string): string;
function iso(d: Date | string | null): string | null;
function iso(d: Date | string | null): string | null {
  if (d === null) return null;
  if (typeof d === 'string' && d.length === 24 && d.endsWith('Z')) return d;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}

export function addressView(a: Partial<Address> | null): Address | null {
  if (!a) return null;
  const out = {} as Address;
  for (const key of ADDRESS_KEYS) out[key] = a[key] ?? null;
  return out;
}

function customerView(c: CustomerJson | null) {
  if (!c) return null;
  const { first_name, last_name } = splitName(c);
  return { id: c.id, email: c.email, first_name, last_name, phone: c.phone };
}

export function lineFulfillmentStatus(l: Pick<LineJson, 'fulfilled_quantity' | 'quantity'>): 'fulfilled' | 'partial' | null {
  if (l.fulfilled_quantity >= l.quantity) return 'fulfilled';
  return l.fulfilled_quantity > 0 ? 'partial' : null;
}

/** A line as orders show it; `step` is the order currency's (hundredthsStep), for the per-unit final_price. */
export function lineItemView(l: LineJson, step: number) {
  const lineMinor = l.price_minor * l.quantity;
  const finalLine = lineMinor - l.total_discount_minor;
  return {
    id: l.id,
    product_id: l.product_num_id,
    variant_id: l.variant_num_id ?? l.product_num_id,
    title: l.title,
    variant_title: l.variant_title,
    quantity: l.quantity,
    price: money(l.price_minor),
    line_price: money(lineMinor),
    final_price: money(finalUnitMinor(finalLine, l.quantity, step)),
    final_line_price: money(finalLine),
    total_discount: money(l.total_discount_minor),
    sku: l.sku,
    fulfillment_status: lineFulfillmentStatus(l),
    requires_shipping: l.requires_shipping,
    taxable: l.taxable,
    properties: l.properties,
  };
}

/** The shipping line's original price in minor units (0 without one). */
export function shippingOriginalMinor(o: Pick<OrderRow, 'shipping_line'>): number {
  const text = o.shipping_line?.price;
  if (!text) return 0;
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  return m ? Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0')) : 0;
}

/**
 * The shipping line at the price of the rate chosen (C15.1: "the chosen rate's `title`, `code`,
 * `source`, `price` and `currency`"), before a FreeShipping code: what was waived shows in
 * `shipping_price` (what is charged) and `total_discounts`, as on the checkout's `shipping_line`.
 */
function shippingLines(o: OrderRow) {
  if (!o.shipping_line) return [];
  const s = o.shipping_line;
  return [{ title: s.title, code: s.code, source: s.source, price: money(shippingOriginalMinor(o)), currency: o.currency }];
}

function shippingMethods(o: OrderRow) {
  if (!o.shipping_line) return [];
  const s = o.shipping_line;
  return [{ handle: s.handle ?? s.code, title: s.title, price: money(o.shipping_minor), original_price: money(shippingOriginalMinor(o)) }];
}

/** The discount code, then the automatic discounts of the checkout's functions (C11.3). */
function discountApplications(o: OrderRow) {
  const out: { type: 'discount_code' | 'automatic'; code: string | null; value: string; value_type: 'fixed_amount' | 'percentage'; title: string }[] = [];
  const d = o.discount;
  if (d) {
    const value = d.type === 'Percentage' ? money(d.percentBp ?? 0) : d.type === 'Flat' ? money(d.amountMinor ?? 0) : '100.00';
    out.push({ type: 'discount_code', code: d.code, value, value_type: d.type === 'Flat' ? 'fixed_amount' : 'percentage', title: d.code });
  }
  for (const a of o.automatic_discounts ?? []) out.push({ type: 'automatic', code: null, value: a.value, value_type: a.value_type, title: a.title });
  return out;
}

export const itemCount = (o: Pick<OrderRow, 'line_items'>) => o.line_items.reduce((s, l) => s + l.quantity, 0);

export function orderStatusUrl(baseUrl: string, o: Pick<OrderRow, 'slug' | 'id' | 'confirmation_number'>): string {
  return `${baseUrl}/storefront/${o.slug}/orders/${o.id}?key=${encodeURIComponent(o.confirmation_number)}`;
}

/** app-api.md Order (app API), every field; `metafields` as `shown` says. */
export function orderView(o: OrderRow, baseUrl: string, metafields: MetafieldsShown) {
  const taxPpm = o.tax_rate === null ? null : parseTaxRate(o.tax_rate);
  return {
    id: o.id,
    name: `#${o.order_number}`,
    order_number: o.order_number,
    email: o.email,
    phone: o.phone,
    financial_status: o.financial_status,
    fulfillment_status: o.fulfillment_status,
    cancelled: o.cancelled_at !== null,
    cancelled_at: iso(o.cancelled_at),
    cancel_reason: o.cancel_reason,
    currency: o.currency,
    presentment_currency: o.currency,
    subtotal_price: money(o.subtotal_minor),
    tax_price: money(o.tax_minor),
    shipping_price: money(o.shipping_minor),
    total_discounts: money(o.discount_minor),
    total_price: money(o.total_minor),
    total_refunded_amount: money(o.refunded_minor),
    total_net_amount: money(o.total_minor - o.refunded_minor),
    item_count: itemCount(o),
    line_items: o.line_items.map((l) => lineItemView(l, hundredthsStep(o.currency))),
    customer: customerView(o.customer),
    shipping_address: addressView(o.shipping_address),
    billing_address: addressView(o.billing_address),
    shipping_methods: shippingMethods(o),
    shipping_lines: shippingLines(o),
    tax_lines: taxPpm === null ? [] : [{ title: 'Tax', price: money(o.tax_minor), rate: Number(formatTaxRate(taxPpm)) }],
    transactions: (o.transactions ?? []).map((t) => ({
      id: t.id, amount: money(t.amount_minor), kind: t.kind, status: t.status, gateway: t.gateway, created_at: iso(t.created_at),
    })),
    discount_applications: discountApplications(o),
    metafields: metafields === 'shown' ? metafieldsView(o.metafields) : {},
    attributes: o.attributes,
    note: o.note,
    tags: o.tags,
    tracking_number: o.tracking_number,
    tracking_url: o.tracking_url,
    order_status_url: orderStatusUrl(baseUrl, o),
    confirmation_number: o.confirmation_number,
    created_at: iso(o.created_at),
    updated_at: iso(o.updated_at),
    processed_at: iso(o.processed_at),
  };
}
export type OrderView = ReturnType<typeof orderView>;

/** The list view: app-api.md's subset, in the full view's order. */
export function orderListView(o: OrderRow) {
  return {
    id: o.id,
    name: `#${o.order_number}`,
    order_number: o.order_number,
    email: o.email,
    phone: o.phone,
    financial_status: o.financial_status,
    fulfillment_status: o.fulfillment_status,
    subtotal_price: money(o.subtotal_minor),
    tax_price: money(o.tax_minor),
    shipping_price: money(o.shipping_minor),
    total_discounts: money(o.discount_minor),
    total_price: money(o.total_minor),
    line_items: o.line_items.map((l) => lineItemView(l, hundredthsStep(o.currency))),
    customer: customerView(o.customer),
    shipping_address: addressView(o.shipping_address),
    billing_address: addressView(o.billing_address),
    shipping_lines: shippingLines(o),
    created_at: iso(o.created_at),
    updated_at: iso(o.updated_at),
  };
}

/** The `orders/create` body: exactly app-api.md's field list (C8.8). */
export function orderCreatePayload(o: OrderRow) {
  const c = customerView(o.customer);
  const a = addressView(o.shipping_address);
  return {
    id: o.id,
    name: `#${o.order_number}`,
    order_number: o.order_number,
    email: o.email,
    phone: o.phone,
    financial_status: o.financial_status,
    fulfillment_status: o.fulfillment_status,
    currency: o.currency,
    total_price: money(o.total_minor),
    subtotal_price: money(o.subtotal_minor),
    shipping_price: money(o.shipping_minor),
    created_at: iso(o.created_at),
    customer: c && { id: c.id, first_name: c.first_name, last_name: c.last_name, email: c.email },
    shipping_address: a && { address1: a.address1, address2: a.address2, city: a.city, province: a.province, country: a.country, zip: a.zip, phone: a.phone },
    line_items: o.line_items.map((l) => {
      const v = lineItemView(l, hundredthsStep(o.currency));
      return { id: v.id, product_id: v.product_id, variant_id: v.variant_id, title: v.title, quantity: v.quantity, price: v.price, sku: v.sku };
    }),
    shipping_lines: shippingLines(o),
  };
}

/**
 * The merchant admin order record (app-api.md Order, merchant admin record; C7.1): the update body's
 * fields, `orderId`, `shippedDate`, `updatedAt`, extended with `orderNumber`, `name`,
 * `financialStatus`, `fulfillmentStatus` and `totalPrice`. The contact and address fields are the
 * shipping address's (`clientName` its first and last name, `state` its province, `pinCode` its zip).
 */
export function merchantOrderRecord(o: OrderRow) {
  const a = addressView(o.shipping_address);
  const clientName = [a?.first_name, a?.last_name].filter(Boolean).join(' ') || o.customer?.name || null;
  return {
    orderId: o.id,
    orderNumber: o.order_number,
    name: `#${o.order_number}`,
    status: o.status,
    financialStatus: o.financial_status,
    fulfillmentStatus: o.fulfillment_status,
    totalPrice: money(o.total_minor),
    courierName: o.courier_name,
    trackingNumber: o.tracking_number,
    digitaldata: o.digital_data,
    deliveryDate: iso(o.delivery_date),
    notes: o.note,
    products: o.line_items.map((l) => ({
      lineItemId: l.id,
      productId: l.product_id,
      varientId: l.variant_id,
      title: l.title,
      quantity: l.quantity,
      price: money(l.price_minor),
    })),
    clientName,
    email: o.email,
    mobileNumber: o.phone,
    address: a?.address1 ?? null,
    city: a?.city ?? null,
    state: a?.province ?? null,
    country: a?.country ?? null,
    pinCode: a?.zip ?? null,
    paymentMethod: o.payment_method,
    shippedDate: iso(o.shipped_date),
    updatedAt: iso(o.updated_at),
  };
}
export type MerchantOrderRecord = ReturnType<typeof merchantOrderRecord>;

/** app-api.md Order `financial_status`. */
export const FINANCIAL_STATUSES = ['pending', 'paid', 'partially_paid', 'refunded', 'partially_refunded'] as const;
/** app-api.md Order `fulfillment_status`. */
export const FULFILLMENT_STATUSES = ['unfulfilled', 'partial', 'fulfilled'] as const;
/** The merchant order status (app-api.md Order status, merchant update; C7.2). */
export const MERCHANT_STATUSES = ['pending', 'confirmed', 'paid', 'partial', 'shipped', 'delivered', 'canceled', 'returned', 'exchange'] as const;
