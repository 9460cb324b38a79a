// Request bodies of the merchant order routes (C7.1, app-api.md merchant update), read field by field
// into checked values: every problem is a 400 naming its field (src/content/fields.ts).
import { isUuid } from '../ids.js';
import { longerThan } from '../text.js';
import { EMAIL_SHAPE, keptEmail, MAX_EMAIL_CHARS } from '../email.js';
import { AmountTooLargeError, parseMoney } from '../money.js';
import { fitsMinorUnits, isoCurrency, minorDigits } from '../currencies.js';
import {
  bodyObject, fieldError, has, optionalBoolean, optionalText, parseInstant, type Body,
} from '../content/fields.js';
import { ADDRESS_KEYS, type Address, type ShippingLine } from './order-view.js';
import { parseTaxRate } from './pricing.js';

/** C7.1: these make the order paid at once. */
export const PAID_AT_ONCE = ['card', 'upi', 'wallet'] as const;
/** C7.1 / C7.2: these leave it pending; on a later update they move it to paid. */
export const CASH_OR_OFFLINE = ['cod', 'cash', 'bank_transfer', 'offline'] as const;
export const PAYMENT_METHODS = [...PAID_AT_ONCE, ...CASH_OR_OFFLINE] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** C7.2: the merchant statuses an update may set. */
export const UPDATE_STATUSES = ['pending', 'confirmed', 'shipped', 'delivered', 'canceled', 'returned', 'exchange'] as const;

export const MAX_LINE_ITEMS = 250;
const MAX_QUANTITY = 100_000;

export interface LineInput {
  label: string;
  /** UUID or numeric id (C14.3); null for a custom line item. */
  productRef: string | null;
  variantRef: string | null;
  quantity: number;
  properties: [string, string][];
  /** Custom line items (and price overrides of replacement products). */
  title: string | null;
  priceMinor: number | null;
}

export interface CustomerInput {
  email: string | null;
  raw: Body;
}

export interface NewOrderInput {
  customer: CustomerInput | null;
  email: string | null;
  phone: string | null;
  lines: LineInput[];
  /** Null only for a checkout that needs no shipping (POST /orders requires one). */
  shippingAddress: Partial<Address> | null;
  billingAddress: Partial<Address> | null;
  shippingLine: ShippingLine | null;
  shippingMinor: number;
  discountCode: string | null;
  taxRatePpm: number | null;
  paymentMethod: PaymentMethod;
  note: string | null;
  tags: string[];
  currency: string | null;
  attributes: unknown[];
  /**
   * A checkout's automatic discounts (C11.3), computed by its functions: what each takes off each
   * line, in the order of `lines`. Applied after the discount code; never more than a line has left.
   */
  automaticDiscounts?: { title: string; value: string; valueType: 'percentage' | 'fixed_amount'; lineAmountsMinor: number[] }[];
}

function object(value: unknown, field: string): Body {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fieldError(field, 'must be an object');
  return value as Body;
}

/** A text field, trimmed; `verbatim` keeps it exactly as sent (carrier labels, app-api.md). */
function text(value: unknown, field: string, max = 255, verbatim = false): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') throw fieldError(field, 'must be a string');
  const t = verbatim ? value : value.trim();
  if (longerThan(t, max)) throw fieldError(field, `is too long (maximum ${max} characters)`);
  return t === '' ? null : t;
}

/** The error of an email past its bound as kept (src/email.ts), in `text`'s words. */
const tooLong = (field: string) => (max: number) => fieldError(field, `is too long (maximum ${max} characters)`);

/** An id of the catalog: a UUID, or the numeric id as a number or digit string (C14.2, C14.3). */
function catalogRef(value: unknown, field: string, required: boolean): string | null {
  if (value === undefined || value === null || value === '') {
    if (required) throw fieldError(field, "can't be blank");
    return null;
  }
  // A JSON number is read as its decimal text and then held to the same grammar as a string: the
  // catalog looks numeric ids up only up to 15 digits (products.repo.ts), and a longer number
  // taken for a UUID failed the database's cast (a 500).
  const ref = typeof value === 'number' ? (Number.isSafeInteger(value) && value > 0 ? String(value) : null)
    : typeof value === 'string' ? value.trim().toLowerCase() : null;
  if (ref !== null && (isUuid(ref) || /^\d{1,15}$/.test(ref))) return ref;
  throw fieldError(field, 'must be a product or variant id (UUID or numeric id)');
}

function quantity(value: unknown, field: string): number {
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw fieldError(field, 'must be a whole number of at least 1');
  if (n > MAX_QUANTITY) throw fieldError(field, `must be at most ${MAX_QUANTITY}`);
  return n;
}

function money(value: unknown, field: string): number {
  let minor: number | null;
  try {
    minor = parseMoney(value);
  } catch (err) {
    throw fieldError(field, err instanceof AmountTooLargeError ? 'is too large' : 'must be a decimal amount with at most 2 decimals');
  }
  if (minor === null) throw fieldError(field, "can't be blank");
  if (minor < 0) throw fieldError(field, 'must be greater than or equal to 0');
  if (minor > 1e13) throw fieldError(field, 'is too large');
  return minor;
}

/**
 * `properties` as [key, value] pairs (app-api.md): sent as pairs, as `{ name, value }` objects, or
 * as one object of keys; values are kept as strings.
 */
export function readProperties(value: unknown, field: string): [string, string][] {
  if (value === undefined || value === null) return [];
  const pairs: [unknown, unknown][] = [];
  if (Array.isArray(value)) {
    for (const p of value) {
      if (Array.isArray(p) && p.length === 2) pairs.push([p[0], p[1]]);
      else if (p && typeof p === 'object' && 'name' in p) pairs.push([(p as Body).name, (p as Body).value]);
      else throw fieldError(field, 'must be [key, value] pairs');
    }
  } else if (typeof value === 'object') {
    pairs.push(...Object.entries(value as Body));
  } else throw fieldError(field, 'must be [key, value] pairs');
  if (pairs.length > 50) throw fieldError(field, 'has more than 50 entries');
  return pairs.map(([k, v]) => {
    if (typeof k !== 'string' || k.trim() === '') throw fieldError(field, 'keys must be non-empty strings');
    if (v !== null && typeof v === 'object') throw fieldError(field, 'values must be strings');
    const s = v === null || v === undefined ? '' : String(v);
    if (longerThan(k, 255) || longerThan(s, 1000)) throw fieldError(field, 'entries are too long');
    return [k, s];
  });
}

function readLine(raw: unknown, label: string): LineInput {
  const l = object(raw, label);
  const productRef = catalogRef(l.product_id ?? l.productId, `${label}.product_id`, false);
  const title = text(l.title, `${label}.title`);
  const custom = productRef === null;
  if (custom && (title === null || l.price === undefined)) {
    throw fieldError(`${label}.product_id`, "can't be blank (a custom line item needs a title and a price instead)");
  }
  return {
    label,
    productRef,
    variantRef: custom ? null : catalogRef(l.variant_id ?? l.variantId ?? l.varientId, `${label}.variant_id`, false),
    quantity: quantity(l.quantity, `${label}.quantity`),
    properties: readProperties(l.properties, `${label}.properties`),
    title,
    // A product's line is priced from the catalog; only a custom line brings its own price.
    priceMinor: custom ? money(l.price, `${label}.price`) : null,
  };
}

function readLines(value: unknown, field: string, ref: (raw: unknown, label: string) => LineInput): LineInput[] {
  if (!Array.isArray(value) || value.length === 0) throw fieldError(field, 'must be a non-empty array');
  if (value.length > MAX_LINE_ITEMS) throw fieldError(field, `has more than ${MAX_LINE_ITEMS} items`);
  return value.map((raw, i) => ref(raw, `${field}[${i}]`));
}

export function readAddress(value: unknown, field: string): Partial<Address> {
  const a = object(value, field);
  const out: Partial<Address> = {};
  for (const key of ADDRESS_KEYS) {
    const v = text(a[key], `${field}.${key}`);
    if (v !== null) out[key] = v;
  }
  // A two-letter country is its own code.
  if (!out.country_code && out.country && /^[A-Za-z]{2}$/.test(out.country)) out.country_code = out.country.toUpperCase();
  return out;
}

function readShippingLine(value: unknown): { line: ShippingLine; minor: number } | null {
  if (value === undefined || value === null) return null;
  const s = object(value, 'shipping_line');
  const minor = money(s.price ?? '0', 'shipping_line.price');
  const source = s.source === undefined || s.source === null ? null : text(s.source, 'shipping_line.source');
  return {
    line: { title: text(s.title, 'shipping_line.title'), code: text(s.code, 'shipping_line.code'), source, price: moneyText(minor) },
    minor,
  };
}

const moneyText = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

function readPaymentMethod(value: unknown, field: string): PaymentMethod {
  const v = typeof value === 'string' ? value.trim().toLowerCase() : value;
  if (!(PAYMENT_METHODS as readonly unknown[]).includes(v)) throw fieldError(field, `must be one of ${PAYMENT_METHODS.join(', ')}`);
  return v as PaymentMethod;
}

function readTags(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((t) => typeof t === 'string')) throw fieldError('tags', 'must be an array of strings');
  if (value.length > 250) throw fieldError('tags', 'has more than 250 tags');
  return value as string[];
}

/** C7.1 `POST /orders`. */
export function readNewOrder(raw: unknown): NewOrderInput {
  const body = bodyObject(raw);
  let customer: CustomerInput | null = null;
  if (body.customer !== undefined && body.customer !== null) {
    const c = object(body.customer, 'customer');
    const email = text(c.email, 'customer.email', MAX_EMAIL_CHARS);
    customer = { email: email === null ? null : keptEmail(email, tooLong('customer.email')), raw: c };
  }
  const sent = text(body.email, 'email', MAX_EMAIL_CHARS);
  const email = sent === null ? (customer?.email ?? null) : keptEmail(sent, tooLong('email'));
  if (email !== null && !EMAIL_SHAPE.test(email)) throw fieldError('email', 'is invalid');
  if (body.shipping_address === undefined || body.shipping_address === null) throw fieldError('shipping_address', "can't be blank");
  const shippingAddress = readAddress(body.shipping_address, 'shipping_address');
  const billingAddress = body.billing_address === undefined || body.billing_address === null ? null : readAddress(body.billing_address, 'billing_address');
  const shipping = readShippingLine(body.shipping_line);
  let taxRatePpm: number | null = null;
  if (body.tax_rate !== undefined && body.tax_rate !== null) {
    taxRatePpm = parseTaxRate(body.tax_rate);
    if (taxRatePpm === null) throw fieldError('tax_rate', 'must be a rate from 0 to 1 with at most 6 decimals (0.08 is 8 %)');
  }
  if (body.paymentMethod === undefined || body.paymentMethod === null) throw fieldError('paymentMethod', "can't be blank");
  let currency: string | null = null;
  if (body.currency !== undefined && body.currency !== null) {
    currency = isoCurrency(body.currency);
    if (!currency) throw fieldError('currency', 'must be an ISO 4217 currency code');
  }
  let attributes: unknown[] = [];
  if (body.attributes !== undefined && body.attributes !== null) {
    if (!Array.isArray(body.attributes) || body.attributes.length > 100) throw fieldError('attributes', 'must be an array of at most 100 entries');
    attributes = body.attributes;
  }
  const note = optionalText(body, 'note', { raw: true, max: 5000 });
  return {
    customer,
    email,
    phone: text(body.phone, 'phone', 64) ?? (customer ? text(customer.raw.phone, 'customer.phone', 64) : null) ?? shippingAddress.phone ?? null,
    lines: readLines(body.line_items, 'line_items', readLine),
    shippingAddress,
    billingAddress,
    shippingLine: shipping?.line ?? null,
    shippingMinor: shipping?.minor ?? 0,
    discountCode: body.discount_code === undefined || body.discount_code === null || body.discount_code === '' ? null : text(body.discount_code, 'discount_code', 100),
    taxRatePpm,
    paymentMethod: readPaymentMethod(body.paymentMethod, 'paymentMethod'),
    note: note ?? null,
    tags: readTags(body.tags),
    currency,
    attributes,
  };
}

/**
 * The amounts a body brings (custom line prices, replacement price overrides, the shipping price)
 * must be whole minor units of the order's currency: "1000.50" is no yen amount (ISO 4217).
 */
export function assertFitsCurrency(currency: string, lines: LineInput[], shippingMinor = 0) {
  const refuse = (field: string) => fieldError(field, `must be a whole number of ${currency} minor units (${minorDigits(currency)} decimals)`);
  for (const l of lines) if (l.priceMinor !== null && !fitsMinorUnits(l.priceMinor, currency)) throw refuse(`${l.label}.price`);
  if (!fitsMinorUnits(shippingMinor, currency)) throw refuse('shipping_line.price');
}

export interface OrderUpdateInput {
  status?: (typeof UPDATE_STATUSES)[number];
  courierName?: string | null;
  trackingNumber?: string | null;
  digitaldata?: string | null;
  deliveryDate?: Date | null;
  restock?: boolean;
  staffId?: string | null;
  notes?: string | null;
  products?: LineInput[];
  clientName?: string | null;
  email?: string | null;
  mobileNumber?: string | null;
  address?: string | null;
  city?: string | null;
  state?: string | null;
  country?: string | null;
  pinCode?: string | null;
  paymentMethod?: PaymentMethod;
}

function readReplacement(raw: unknown, label: string): LineInput {
  const p = object(raw, label);
  return {
    label,
    productRef: catalogRef(p.productId ?? p.product_id, `${label}.productId`, true),
    variantRef: catalogRef(p.varientId ?? p.variantId ?? p.variant_id, `${label}.varientId`, false),
    quantity: quantity(p.quantity, `${label}.quantity`),
    properties: readProperties(p.properties, `${label}.properties`),
    title: null,
    priceMinor: p.price === undefined || p.price === null ? null : money(p.price, `${label}.price`),
  };
}

/** app-api.md `PUT /orders/update/{orderId}` (and the PATCH twin): every field optional. */
export function readOrderUpdate(raw: unknown): OrderUpdateInput {
  const body = bodyObject(raw);
  const out: OrderUpdateInput = {};
  if (has(body, 'status')) {
    if (!(UPDATE_STATUSES as readonly unknown[]).includes(body.status)) throw fieldError('status', `must be one of ${UPDATE_STATUSES.join(', ')}`);
    out.status = body.status as OrderUpdateInput['status'];
  }
  const texts: [keyof OrderUpdateInput, number][] = [
    ['courierName', 255], ['trackingNumber', 255], ['digitaldata', 10_000], ['staffId', 255], ['clientName', 255], ['email', MAX_EMAIL_CHARS],
    ['mobileNumber', 64], ['address', 255], ['city', 255], ['state', 255], ['country', 255], ['pinCode', 64],
  ];
  // The tracking fields are carrier labels, stored exactly as sent like the fulfillment's.
  const verbatim = new Set<string>(['courierName', 'trackingNumber']);
  for (const [key, max] of texts) if (has(body, key)) (out as any)[key] = text(body[key], key, max, verbatim.has(key));
  if (has(body, 'notes')) out.notes = optionalText(body, 'notes', { raw: true, max: 5000 }) ?? null;
  if (out.email) {
    out.email = keptEmail(out.email, tooLong('email'));
    if (!EMAIL_SHAPE.test(out.email)) throw fieldError('email', 'is invalid');
  }
  if (has(body, 'deliveryDate')) {
    if (body.deliveryDate === null) out.deliveryDate = null;
    else {
      const d = parseInstant(body.deliveryDate);
      if (!d) throw fieldError('deliveryDate', 'must be an ISO 8601 date-time');
      out.deliveryDate = d;
    }
  }
  const restock = optionalBoolean(body, 'restock');
  if (restock !== undefined) out.restock = restock;
  if (has(body, 'products')) out.products = readLines(body.products, 'products', readReplacement);
  if (has(body, 'paymentMethod')) out.paymentMethod = readPaymentMethod(body.paymentMethod, 'paymentMethod');
  return out;
}

/** `{ reason?, restock?, pos? }` of the refund and cancel routes. */
export function readRefundOrCancel(raw: unknown): { reason: string | null; restock: boolean; pos: boolean } {
  const body = raw === undefined || raw === null ? {} : bodyObject(raw);
  return {
    reason: text(body.reason, 'reason', 255),
    restock: optionalBoolean(body, 'restock') ?? false,
    pos: optionalBoolean(body, 'pos') ?? false,
  };
}

export const isOrderId = (id: unknown): id is string => isUuid(id);
