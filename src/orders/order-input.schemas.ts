// The merchant order bodies (C7.1, app-api.md merchant update) as schemas: what each field's JSON
// may be, checked before the readers of order-input.ts run (issue 11 section 1). The readers keep
// what a schema cannot say: aliases (`product_id`/`productId`, `varientId`/`variantId`/`variant_id`),
// the custom line item rule, trimming, money to minor units, emails, dates, lookups. Messages are
// the readers' (`x-error`).
//
// Fields inside arrays (`line_items[0].quantity`) carry their JSON types only: the readers name
// them with brackets, a failed schema with dots, so their value rules (minimum, required) stay in
// the readers, which name them as they always have.
import { Type } from 'typebox';
import { nullable, StringEnum } from '../http/schemas.js';
import { ADDRESS_KEYS } from './order-view.js';
import { MAX_LINE_ITEMS, PAYMENT_METHODS, UPDATE_STATUSES } from './order-input.js';
import { requiredAs, textish } from './schema-parts.js';

const paymentWords = `must be one of ${PAYMENT_METHODS.join(', ')}`;
const amountWords = 'must be a decimal amount with at most 2 decimals';

/** A decimal amount as `money()` reads it: a decimal string or a number, from 0, at most two decimals. */
const amount = (description: string) =>
  Type.Unsafe<string | number | null>({ type: ['string', 'number', 'null'], description: `${description}: a decimal string or number from 0, at most two decimals`, 'x-error': { type: amountWords } });

/** A product or variant of the catalog: its UUID, or its numeric id as a number or digit string (C14.3). */
const catalogRef = (description: string) =>
  Type.Unsafe<string | number | null>({ type: ['string', 'number', 'null'], description: `${description}: a UUID or the numeric id`, 'x-error': { type: 'must be a product or variant id (UUID or numeric id)' } });

const quantity = Type.Unsafe<number | string>({
  type: ['number', 'string'],
  description: 'a whole number from 1 to 100000 (a digit string too); required',
  'x-error': { type: 'must be a whole number of at least 1' },
});

const properties = Type.Unsafe<unknown[] | Record<string, unknown> | null>({
  type: ['array', 'object', 'null'],
  description: 'at most 50 entries, as [key, value] pairs, `{ name, value }` objects, or one object of keys; values are kept as strings',
  'x-error': { type: 'must be [key, value] pairs' },
});

const address = (description: string) => nullable(Type.Object(
  Object.fromEntries(ADDRESS_KEYS.map((key) => [key, Type.Optional(textish('at most 255 characters, trimmed'))])),
  { description },
));

/** What `readLines()` reads as the array itself: 1 to 250 entries. */
const lines = <T extends ReturnType<typeof Type.Object>>(item: T, description: string) => Type.Array(item, {
  minItems: 1, maxItems: MAX_LINE_ITEMS, description,
  'x-error': { type: 'must be a non-empty array', minItems: 'must be a non-empty array', maxItems: `has more than ${MAX_LINE_ITEMS} items` },
});

const newLine = Type.Object({
  product_id: Type.Optional(catalogRef('the product (alias `productId`); leave it out for a custom line item')),
  productId: Type.Optional(catalogRef('alias of product_id')),
  variant_id: Type.Optional(catalogRef('the variant (aliases `variantId`, `varientId`); required for a product with variants')),
  variantId: Type.Optional(catalogRef('alias of variant_id')),
  varientId: Type.Optional(catalogRef('alias of variant_id')),
  quantity: Type.Optional(quantity),
  properties: Type.Optional(properties),
  title: Type.Optional(textish('a custom line item\'s title (required for one)')),
  price: Type.Optional(amount('a custom line item\'s unit price (required for one); a product\'s line is priced from the catalog')),
}, { description: 'a product line `{ product_id, variant_id?, quantity, properties? }`, or a custom line `{ title, price, quantity, properties? }`' });

/** C7.1 `POST /orders`. */
export const NewOrderBody = Type.Object({
  customer: Type.Optional(nullable(Type.Object({
    email: Type.Optional(textish('the customer; a new email creates one (customers/create) with first_name, last_name, phone, note, accepts_marketing and addresses as the customer create reads them')),
  }, { description: '`{ email, first_name, last_name, phone }`: the order\'s customer, found by email or created' }))),
  email: Type.Optional(textish('default: the customer\'s email; must look like an email')),
  phone: Type.Optional(textish('at most 64 characters; default: the customer\'s phone, else the shipping address\'s')),
  line_items: Type.Optional(lines(newLine, 'required: 1 to 250 line items')),
  shipping_address: Type.Optional(address('required; a two-letter `country` is also the `country_code`')),
  billing_address: Type.Optional(address('default: the shipping address')),
  shipping_line: Type.Optional(nullable(Type.Object({
    title: Type.Optional(textish('the method\'s name')),
    code: Type.Optional(textish('the method\'s code')),
    source: Type.Optional(textish('the shipping app\'s handle, or null')),
    price: Type.Optional(amount('the shipping price (default 0), in whole minor units of the order\'s currency')),
  }))),
  discount_code: Type.Optional(textish('at most 100 characters; checked as at checkout (status, start/end, minimum, total uses, uses per customer, products)')),
  tax_rate: Type.Optional(Type.Unsafe<string | number | null>({
    type: ['string', 'number', 'null'], minimum: 0, maximum: 1,
    description: 'a rate from 0 to 1 with at most 6 decimals (0.08 is 8 %), as a number or decimal string, applied to the line items after discounts',
    'x-error': 'must be a rate from 0 to 1 with at most 6 decimals (0.08 is 8 %)',
  })),
  paymentMethod: Type.Optional(nullable(Type.String({
    description: `${PAYMENT_METHODS.join(', ')} (any case); card, upi and wallet are paid at once, the others leave the order pending; required`,
    'x-error': paymentWords,
  }))),
  note: Type.Optional(nullable(Type.String({ maxLength: 5000, description: 'kept as sent' }))),
  tags: Type.Optional(nullable(Type.Array(Type.String(), { description: 'at most 250, kept as sent', 'x-error': 'must be an array of strings' }))),
  currency: Type.Optional(nullable(Type.String({ description: 'ISO 4217, any case; default: the store currency', 'x-error': 'must be an ISO 4217 currency code' }))),
  attributes: Type.Optional(nullable(Type.Array(Type.Unknown({ description: 'any JSON value, kept as sent' }), {
    maxItems: 100, description: 'kept as sent', 'x-error': 'must be an array of at most 100 entries',
  }))),
  storeId: Type.Optional(Type.Unknown({ description: 'the store (a UUID), for the platform operator only; ignored for a store account, whatever its value' })),
}, {
  // The required fields, in `allOf` so that a body missing several is answered as the reader
  // answers it: first `shipping_address`, then `paymentMethod`, then `line_items` (Ajv checks
  // `allOf` before a body's own `required` and its properties).
  allOf: [Type.Unsafe({ required: ['shipping_address', 'paymentMethod'] }), requiredAs('line_items', 'must be a non-empty array')],
});

const replacementLine = Type.Object({
  productId: Type.Optional(catalogRef('the product (alias `product_id`); required')),
  product_id: Type.Optional(catalogRef('alias of productId')),
  varientId: Type.Optional(catalogRef('the variant (aliases `variantId`, `variant_id`); required for a product with variants')),
  variantId: Type.Optional(catalogRef('alias of varientId')),
  variant_id: Type.Optional(catalogRef('alias of varientId')),
  quantity: Type.Optional(quantity),
  properties: Type.Optional(properties),
  price: Type.Optional(amount('a unit price overriding the catalog\'s')),
}, { description: '`{ productId, varientId?, quantity, price?, properties? }`' });

/** A text field of the update: `max` characters (after trimming, unless kept verbatim). */
const updateText = (description: string, verbatim?: number) =>
  Type.Optional(textish(description, verbatim ? { maxLength: verbatim } : {}));

/** app-api.md `PUT /orders/update/{orderId}` (and the PATCH twin): every field optional. */
export const OrderUpdateBody = Type.Object({
  status: Type.Optional(StringEnum(UPDATE_STATUSES, {
    description: 'a new status on a delivered or canceled order -> 400', 'x-error': `must be one of ${UPDATE_STATUSES.join(', ')}`,
  })),
  courierName: updateText('kept exactly as sent, at most 255 characters', 255),
  trackingNumber: updateText('kept exactly as sent, at most 255 characters', 255),
  digitaldata: updateText('at most 10000 characters'),
  deliveryDate: Type.Optional(nullable(Type.String({ description: 'ISO 8601 date or date-time (UTC without an offset); null clears it', 'x-error': 'must be an ISO 8601 date-time' }))),
  restock: Type.Optional(Type.Boolean({ description: 'with status returned or canceled, stock goes back once per line item' })),
  staffId: updateText('kept for audit, at most 255 characters'),
  notes: Type.Optional(nullable(Type.String({ maxLength: 5000, description: 'kept as sent' }))),
  products: Type.Optional(lines(replacementLine, 'replacement line items, 1 to 250; totals are recomputed')),
  clientName: updateText('the shipping address name, at most 255 characters'),
  email: updateText('at most 254 characters; must look like an email'),
  mobileNumber: updateText('at most 64 characters'),
  address: updateText('the shipping address1, at most 255 characters'),
  city: updateText('at most 255 characters'),
  state: updateText('the shipping province, at most 255 characters'),
  country: updateText('at most 255 characters'),
  pinCode: updateText('the shipping zip, at most 64 characters'),
  paymentMethod: Type.Optional(Type.String({
    description: `${PAYMENT_METHODS.join(', ')} (any case); cod, cash, bank_transfer or offline moves a pending order to paid (orders/paid)`,
    'x-error': paymentWords,
  })),
});

/** `{ reason?, restock?, pos? }` of the refund and cancel routes; the body may be left out. */
export const RefundOrCancelBody = Type.Object({
  reason: Type.Optional(textish('at most 255 characters, trimmed')),
  restock: Type.Optional(Type.Boolean({ description: 'default false: stock goes back once per line item' })),
  pos: Type.Optional(Type.Boolean({ description: 'refund only: a point-of-sale refund leaves the order\'s status (default false)' })),
});
