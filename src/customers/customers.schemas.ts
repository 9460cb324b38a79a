// The customer's request bodies (app-api.md `POST /api/v1/customers.json`; C6.3; C7.1), validated
// by the route before `readCustomerPatch` (customers.service.ts) trims, joins the name, lowercases
// and checks the email and keeps the first address. Lengths are counted after trimming, so they
// stay with the reader; `note` is kept as sent, so its limit is said here too.
import { Type, type Static } from 'typebox';
import { nullable } from '../http/schemas.js';

const text = (description: string) => Type.Optional(nullable(Type.String(), { description }));

const fields = {
  first_name: text('trimmed, at most 255 characters; null clears it'),
  last_name: text('trimmed, at most 255 characters; null clears it'),
  phone: text('trimmed, at most 64 characters; null or "" clears it'),
  accepts_marketing: Type.Optional(Type.Boolean({ description: 'default false' })),
  note: Type.Optional(nullable(Type.String({ maxLength: 5000 }), { description: 'kept as sent, at most 5000 characters; null clears it' })),
  tags: Type.Optional(Type.Unknown({ description: 'accepted in any form and not stored (tags come back empty)' })),
  // The entries stay `Unknown` here: the reader checks the first and names a problem by its place
  // (`addresses[0].city`), and later entries are never read, whatever they hold.
  addresses: Type.Optional(nullable(Type.Array(Type.Unknown()), {
    description: 'only the first entry is read: an object whose address1, city, province, country, zip and phone (strings, trimmed, at most 255 characters; '
      + 'null or "" for none) are kept, its other keys ignored; later entries are ignored unread. [] or null clears the address',
    'x-error': 'must be an array of addresses',
  })),
};

const EMAIL = 'trimmed, lowercased, at most 254 characters, a well-formed address, unique in the store (any case)';
/** `EMAIL_RE` of customers.service.ts around the spaces the reader trims; blank is the reader's ("can't be blank"). */
const EMAIL_PATTERN = '^\\s*([^\\s@]+@[^\\s@]+\\.[^\\s@]+)?\\s*$';
const email = nullable(Type.String({ pattern: EMAIL_PATTERN }), { description: EMAIL, 'x-error': { pattern: 'is invalid' } });

/** `POST /api/v1/customers.json`: flat, or wrapped as `{ customer: { ... } }` (config.bodyKey). */
export const customerCreateBody = Type.Object({ email, ...fields }, { description: 'Flat, or wrapped as `{ customer: { ... } }`' });

/** `PUT /api/v1/customers/{id}.json`: the fields sent change, the rest stay. */
export const customerUpdateBody = Type.Object({ email: Type.Optional(email), ...fields }, {
  description: 'The fields sent change, the rest stay. Flat, or wrapped as `{ customer: { ... } }`',
});

/**
 * Merchant `POST /customers` (C7.1). Its body may be wrapped too, but it is not unwrapped before
 * validation: the operator's `storeId` sits beside the wrapper, and unwrapping would lose it. So
 * `email` is required by the reader (flat or inside `customer`), not by this schema.
 */
export const customerAdminBody = Type.Object({
  email: Type.Optional(nullable(Type.String({ pattern: EMAIL_PATTERN }), { description: `required, flat or inside \`customer\`; ${EMAIL}`, 'x-error': { pattern: 'is invalid' } })),
  ...fields,
  // Read by the reader only when it is an object (another value is ignored, as it always was).
  customer: Type.Optional(Type.Unknown({ description: 'the same fields wrapped, REST-style: used instead of the flat ones when it is an object' })),
  storeId: Type.Optional(Type.String({ description: 'the store, for the platform operator only' })),
});

export type CustomerCreateBody = Static<typeof customerCreateBody>;
export type CustomerUpdateBody = Static<typeof customerUpdateBody>;
export type CustomerAdminBody = Static<typeof customerAdminBody>;
