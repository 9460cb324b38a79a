// Customers (app-api.md Customer; C6.3). A stored customer is the subset app-api.md names: one
// combined name (with where its first name ends), one phone, the marketing flag, a note and one
// flat address. Every change writes its event (customers/create, customers/update,
// customers/delete) in its own transaction (C8.1), with the customer in its REST shape as the
// payload (C8.8).
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { AppError, badRequest, notFound } from '../http/errors.js';
import { isUuid, uuidv7 } from '../ids.js';
import { formatMinor } from '../money.js';
import { emit } from '../outbox/emit.js';
import { Money, nullable, Timestamp } from '../http/schemas.js';
import { isUniqueViolation } from '../db/errors.js';
import { deleteOwnedMetafields } from '../metafields/metafields.repo.js';
import type { Page } from '../http/paging.js';
import type { CustomerAdminBody, CustomerCreateBody, CustomerUpdateBody } from './customers.schemas.js';
import { EMAIL_SHAPE, keptEmail, MAX_EMAIL_CHARS } from '../email.js';
import { fieldError, has, optionalBoolean, optionalText, requiredText, unwrap, type Body } from '../content/fields.js';
import {
  deleteCustomerRow, emailTaken, findCustomer, insertCustomer, listCustomers, lockCustomerEmail, type CustomerFields, type CustomerRow,
  type StoredAddress, updateCustomerRow,
} from './customers.repo.js';
import { CUSTOMER_PHONE_MAX, splitName, storedName } from './customer-fields.js';

/** The only address fields kept (app-api.md `POST /api/v1/customers.json`). */
export const ADDRESS_FIELDS = ['address1', 'city', 'province', 'country', 'zip', 'phone'] as const;

function addressView(a: Partial<StoredAddress> | null) {
  if (!a) return null;
  return Object.fromEntries(ADDRESS_FIELDS.map((k) => [k, a[k] ?? null])) as unknown as StoredAddress;
}

/** The REST customer (bare body key `customer`, and every customers/* payload). */
export function customerView(c: CustomerRow) {
  const address = addressView(c.address);
  return {
    id: c.id,
    email: c.email,
    ...splitName(c),
    name: c.name,
    phone: c.phone,
    accepts_marketing: c.accepts_marketing,
    orders_count: c.orders_count,
    total_spent: formatMinor(BigInt(c.total_spent_minor)),
    tags: [] as string[],
    addresses: address ? [address] : [],
    default_address: address,
    tax_exempt: false,
    note: c.note,
    created_at: c.created_at.toISOString(),
    updated_at: c.updated_at.toISOString(),
  };
}
export type CustomerView = ReturnType<typeof customerView>;

const addressText = (description: string) => nullable(Type.String(), { description });

/** The one stored address, as `addressView` writes it: every key present, null when unknown. */
const CustomerAddressSchema = Type.Object({
  address1: addressText('street address'),
  city: addressText('city'),
  province: addressText('state, province or region'),
  country: addressText('country, as sent'),
  zip: addressText('postal code'),
  phone: addressText('phone number'),
});

/** The REST customer (app-api.md Customer; C6.3), as `customerView` writes it. */
export const CustomerSchema = Type.Object({
  id: Type.String({ description: 'customer id (UUID)' }),
  email: Type.String({ description: 'lowercased' }),
  first_name: nullable(Type.String(), { description: 'as sent (trimmed); for a customer stored before first names were kept apart, the first word of the stored name' }),
  last_name: nullable(Type.String(), { description: 'as sent (trimmed); for a customer stored before first names were kept apart, the rest of the stored name' }),
  name: Type.String({ description: 'the one stored name: first and last joined; "" when neither was given' }),
  phone: nullable(Type.String()),
  accepts_marketing: Type.Boolean(),
  orders_count: Type.Integer({ description: 'every order of the customer' }),
  total_spent: Money('order totals less refunds, cancelled orders left out'),
  tags: Type.Array(Type.String(), { description: 'always empty: tags are not stored' }),
  addresses: Type.Array(CustomerAddressSchema, { description: 'the one stored address, or none' }),
  default_address: nullable(CustomerAddressSchema),
  tax_exempt: Type.Boolean({ description: 'always false' }),
  note: nullable(Type.String()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

/** The fields a request sent, checked; absent ones stay undefined. `tags` are accepted and dropped. */
interface CustomerPatch {
  email?: string;
  firstName?: string | null;
  lastName?: string | null;
  phone?: string | null;
  acceptsMarketing?: boolean;
  note?: string | null;
  address?: StoredAddress | null;
}

function readAddress(value: unknown): StoredAddress | null {
  if (value === null) return null;
  if (!Array.isArray(value)) throw fieldError('addresses', 'must be an array of addresses');
  if (!value.length) return null;
  const first = value[0];
  if (first === null || typeof first !== 'object' || Array.isArray(first)) throw fieldError('addresses', 'must be an array of addresses');
  const out = {} as StoredAddress;
  for (const key of ADDRESS_FIELDS) {
    try {
      out[key] = optionalText(first as Body, key) || null;
    } catch (err) {
      throw fieldError(`addresses[0].${key}`, err instanceof AppError && err.fields ? Object.values(err.fields)[0][0] : 'is invalid');
    }
  }
  return ADDRESS_FIELDS.some((k) => out[k] !== null) ? out : null;
}

export function readCustomerPatch(raw: unknown, creating: boolean): CustomerPatch {
  // `{ customer: { ... } }` as REST clients send it, or the fields flat.
  const body = unwrap(raw, 'customer');
  const patch: CustomerPatch = {};
  if (creating || has(body, 'email')) {
    const email = keptEmail(requiredText(body, 'email', MAX_EMAIL_CHARS), (max) => fieldError('email', `is too long (maximum ${max} characters)`));
    if (!EMAIL_SHAPE.test(email)) throw fieldError('email', 'is invalid');
    patch.email = email;
  }
  const first = optionalText(body, 'first_name');
  if (first !== undefined) patch.firstName = first;
  const last = optionalText(body, 'last_name');
  if (last !== undefined) patch.lastName = last;
  const phone = optionalText(body, 'phone', { max: CUSTOMER_PHONE_MAX });
  if (phone !== undefined) patch.phone = phone || null;
  const marketing = optionalBoolean(body, 'accepts_marketing');
  if (marketing !== undefined) patch.acceptsMarketing = marketing;
  const note = optionalText(body, 'note', { raw: true, max: 5000 });
  if (note !== undefined) patch.note = note;
  if (has(body, 'addresses')) patch.address = readAddress(body.addresses);
  return patch;
}

/**
 * The customer as it will be stored: the fields sent over the current ones. The name is rebuilt
 * from the first and last name as the customer shows them, so a field not sent keeps what it was
 * (a last name alone, then a first name: both kept), and `storedName` records where the first ends.
 */
function applyPatch(current: CustomerRow | null, p: CustomerPatch): CustomerFields {
  const names = current ? splitName(current) : { first_name: null, last_name: null };
  const { name, firstNameLength } = storedName(p.firstName !== undefined ? p.firstName : names.first_name, p.lastName !== undefined ? p.lastName : names.last_name);
  return {
    email: p.email ?? current!.email,
    name,
    firstNameLength,
    phone: p.phone !== undefined ? p.phone : (current?.phone ?? null),
    acceptsMarketing: p.acceptsMarketing ?? current?.accepts_marketing ?? false,
    note: p.note !== undefined ? p.note : (current?.note ?? null),
    address: p.address !== undefined ? p.address : (current?.address ? addressView(current.address) : null),
  };
}

const emailTakenError = () => badRequest('email has already been taken', { email: ['has already been taken'] });

/** Two requests racing for one email take turns (lockCustomerEmail); should one slip past, the unique index decides, and the loser gets the same 400. */
async function uniqueEmail<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, 'customers_store_email_key')) throw emailTakenError();
    throw err;
  }
}

/**
 * Creates the customer and its customers/create event in the caller's transaction: for routes
 * that create a customer as part of a larger change (an order with a new email, C7.1).
 */
export async function createCustomerInTx(tx: Queryable, storeId: string, patch: CustomerPatch, now: Date): Promise<CustomerView> {
  const fields = applyPatch(null, patch);
  await lockCustomerEmail(tx, storeId, fields.email);
  if (await emailTaken(tx, storeId, fields.email)) throw emailTakenError();
  const id = uuidv7(now.getTime());
  await insertCustomer(tx, id, storeId, fields, now);
  const view = customerView((await findCustomer(tx, storeId, id))!);
  await emit(tx, { storeId, topic: 'customers/create', payload: view, now });
  return view;
}

export async function createCustomer(deps: Deps, storeId: string, body: CustomerCreateBody | CustomerAdminBody): Promise<CustomerView> {
  const patch = readCustomerPatch(body, true);
  return uniqueEmail(() => deps.db.transaction((tx) => createCustomerInTx(tx, storeId, patch, deps.clock.now())));
}

async function existing(q: Queryable, storeId: string, id: string, lock = false): Promise<CustomerRow> {
  const row = isUuid(id) ? await findCustomer(q, storeId, id, lock) : null;
  if (!row) throw notFound('Customer not found');
  return row;
}

export async function getCustomer(deps: Deps, storeId: string, id: string): Promise<CustomerView> {
  return customerView(await existing(deps.db, storeId, id));
}

export async function listCustomerPage(deps: Deps, storeId: string, page: Page) {
  const { rows, hasNext } = await listCustomers(deps.db, storeId, { limit: page.limit, offset: page.offset });
  return { customers: rows.map(customerView), hasNext };
}

export async function updateCustomer(deps: Deps, storeId: string, id: string, body: CustomerUpdateBody): Promise<CustomerView> {
  const patch = readCustomerPatch(body, false);
  return uniqueEmail(() => deps.db.transaction(async (tx) => {
    const current = await existing(tx, storeId, id, true);
    const fields = applyPatch(current, patch);
    if (fields.email !== current.email) {
      await lockCustomerEmail(tx, storeId, fields.email);
      if (await emailTaken(tx, storeId, fields.email, current.id)) throw emailTakenError();
    }
    const now = deps.clock.now();
    await updateCustomerRow(tx, current.id, fields, now);
    const view = customerView((await findCustomer(tx, storeId, current.id))!);
    await emit(tx, { storeId, topic: 'customers/update', payload: view, now });
    return view;
  }));
}

/** The customer goes; their orders stay, unlinked (docs/decisions.md). The event carries the customer as it was. */
export async function deleteCustomer(deps: Deps, storeId: string, id: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const current = await existing(tx, storeId, id, true);
    const view = customerView(current);
    const now = deps.clock.now();
    await deleteCustomerRow(tx, current.id);
    await deleteOwnedMetafields(tx, storeId, 'customer', current.id, now);
    await emit(tx, { storeId, topic: 'customers/delete', payload: view, now });
  });
}
