// What a buyer may send to a checkout (C15.1), as schemas (validated before the handler runs) and
// the small reader for what a schema cannot say: the line refs in one form, the address's country
// code, the email's shape. Storefront bodies are bounded: lines, quantities and text sizes.
import { Type, type Static } from 'typebox';
import { randomUUID } from 'node:crypto';
import { fieldError } from '../content/fields.js';
import { nullable } from '../http/schemas.js';
import { alpha2 } from '../shipping/countries.js';
import { ADDRESS_KEYS, type Address } from '../orders/order-view.js';
import { withPlaceNames } from '../orders/address-names.js';
import type { AskedLine } from './checkouts.repo.js';
import { MAX_RATE_HANDLE_CHARS } from './rate.js';
import { EMAIL_SHAPE, keptEmail, MAX_EMAIL_CHARS } from '../email.js';

export const MAX_CHECKOUT_LINES = 100;
export const MAX_LINE_QUANTITY = 10_000;

const REF_WORDS = 'must be a product or variant id (UUID or numeric id)';
const catalogRef = (description: string) =>
  Type.Unsafe<string | number>({ type: ['string', 'integer'], maxLength: 36, minimum: 1, description, 'x-error': REF_WORDS });

const LineInputSchema = Type.Object({
  product_id: catalogRef('the product, by UUID or numeric id'),
  variant_id: Type.Optional(Type.Unsafe<string | number | null>({
    type: ['string', 'integer', 'null'], maxLength: 36, minimum: 1, 'x-error': REF_WORDS,
    description: 'the variant (UUID or numeric id); required when the product has variants',
  })),
  quantity: Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY, 'x-error': `must be a whole number from 1 to ${MAX_LINE_QUANTITY}` }),
});

const addressField = Type.Optional(nullable(Type.String({ maxLength: 255 })));
export const AddressInputSchema = Type.Object(
  Object.fromEntries(ADDRESS_KEYS.map((key) => [key, addressField])) as Record<(typeof ADDRESS_KEYS)[number], typeof addressField>,
  { description: 'The order address fields; `country_code` (ISO 3166-1 alpha-2) is required', 'x-error': { type: 'must be an object' } },
);

const checkoutFields = {
  email: Type.Optional(nullable(Type.String({ maxLength: MAX_EMAIL_CHARS, description: "the buyer's email; needed to complete" }))),
  line_items: Type.Array(LineInputSchema, { minItems: 1, maxItems: MAX_CHECKOUT_LINES, description: `1 to ${MAX_CHECKOUT_LINES} lines` }),
  shipping_address: Type.Optional(nullable(AddressInputSchema)),
  discount_code: Type.Optional(nullable(Type.String({ maxLength: 100 }))),
  note: Type.Optional(nullable(Type.String({ maxLength: 5000 }))),
};

export const CheckoutCreateSchema = Type.Object(checkoutFields);

export const CheckoutChangeSchema = Type.Object({
  ...checkoutFields,
  line_items: Type.Optional(Type.Array(LineInputSchema, { minItems: 1, maxItems: MAX_CHECKOUT_LINES, description: 'replaces every line' })),
  shipping_rate: Type.Optional(nullable(Type.Object({ handle: Type.String({ maxLength: MAX_RATE_HANDLE_CHARS }) }, { description: 'one of the checkout\'s current shipping rates, by handle; null clears the choice' }))),
  payment_method: Type.Optional(nullable(Type.String({ maxLength: 100, description: "one of the checkout's payment methods, by handle" }))),
});

export type CheckoutCreate = Static<typeof CheckoutCreateSchema>;
export type CheckoutChange = Static<typeof CheckoutChangeSchema>;

const CATALOG_REF = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$|^[1-9]\d{0,14}$/;

/** The lines as asked, each with a fresh line id; product and variant refs as text. */
export function readLines(lines: CheckoutCreate['line_items']): AskedLine[] {
  return lines.map((l, i) => {
    const ref = String(l.product_id).trim().toLowerCase();
    if (!CATALOG_REF.test(ref)) throw fieldError(`line_items[${i}].product_id`, REF_WORDS);
    const variant = l.variant_id === undefined || l.variant_id === null || l.variant_id === '' ? null : String(l.variant_id).trim().toLowerCase();
    if (variant !== null && !CATALOG_REF.test(variant)) throw fieldError(`line_items[${i}].variant_id`, REF_WORDS);
    return { id: randomUUID(), product_id: ref, variant_id: variant, quantity: l.quantity };
  });
}

/** The address with its country code checked (C15.1): what rates are quoted for. */
export function readAddress(address: NonNullable<CheckoutCreate['shipping_address']>): Partial<Address> {
  const out: Partial<Address> = {};
  for (const key of ADDRESS_KEYS) {
    const value = address[key]?.trim();
    if (value) out[key] = value;
  }
  const code = alpha2(out.country_code ?? (out.country && out.country.length === 2 ? out.country : undefined));
  if (!code) throw fieldError('shipping_address.country_code', 'must be an ISO 3166-1 alpha-2 country code');
  out.country_code = code;
  return withPlaceNames(out);
}

/** The email as kept (src/email.ts): bounded as kept, so a completion never refuses what a change took. */
export function readEmail(email: string | null | undefined): string | null {
  if (!email?.trim()) return null;
  const e = keptEmail(email, (max) => fieldError('email', `is too long (maximum ${max} characters)`));
  if (!EMAIL_SHAPE.test(e)) throw fieldError('email', 'is invalid');
  return e;
}
