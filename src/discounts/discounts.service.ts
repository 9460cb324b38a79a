// Discounts (app-api.md Discount; `GET /api/v1/discounts.json`; merchant `POST /discounts` and
// `PUT /discounts/{id}`, C14.4). The list's status filter is computed on the service clock.
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { isUuid, uuidv7 } from '../ids.js';
import { isUniqueViolation } from '../db/errors.js';
import type { Page } from '../http/paging.js';
import { nullable, StringEnum, Timestamp } from '../http/schemas.js';
import {
  bodyObject, decimalSchema, fieldError, has, instantSchema, optionalDecimal, optionalInstant, optionalInteger, requiredText, toNumber, type Body,
} from '../content/fields.js';
import {
  DISCOUNT_STATUSES, DISCOUNT_TYPES, findDiscount, insertDiscount, listDiscounts, storeProductIds, updateDiscountRow, STATUS_FILTERS,
  type DiscountFields, type DiscountRow, type StatusFilter,
} from './discounts.repo.js';

export { DISCOUNT_STATUSES, DISCOUNT_TYPES };
export const MAX_APPLY_ON_PRODUCTS = 1000;

export function discountView(d: DiscountRow) {
  return {
    couponId: d.id,
    code: d.code,
    type: d.type,
    status: d.status,
    discountPercentage: toNumber(d.discount_percentage),
    discountAmount: toNumber(d.discount_amount),
    minOrderTotal: toNumber(d.min_order_total)!,
    totalCoupons: d.total_coupons,
    usedCount: d.used_count,
    usesPerCustomer: d.uses_per_customer,
    applyOnProducts: d.apply_on_products,
    startDate: d.start_date.toISOString(),
    endDate: d.end_date ? d.end_date.toISOString() : null,
    createdAt: d.created_at.toISOString(),
    updatedAt: d.updated_at.toISOString(),
  };
}
export type DiscountView = ReturnType<typeof discountView>;

/** The discount (app-api.md Discount; C14.4), as `discountView` writes it. */
export const DiscountSchema = Type.Object({
  couponId: Type.String({ description: 'the discount id (UUID)' }),
  code: Type.String(),
  type: StringEnum(DISCOUNT_TYPES),
  status: StringEnum(DISCOUNT_STATUSES),
  discountPercentage: nullable(Type.Number(), { description: 'set for a Percentage discount only' }),
  discountAmount: nullable(Type.Number(), { description: 'set for a Flat discount only' }),
  minOrderTotal: Type.Number(),
  totalCoupons: Type.Integer({ description: '0 means unlimited' }),
  usedCount: Type.Integer(),
  usesPerCustomer: nullable(Type.Integer(), { description: 'null means unlimited' }),
  applyOnProducts: Type.Array(Type.String(), { description: 'product UUIDs; empty means every product' }),
  startDate: Timestamp(),
  endDate: nullable(Timestamp(), { description: 'null: no end' }),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

/** The list's filters (`GET /api/v1/discounts.json`); checked by `listDiscountPage`. */
export const discountListFilters = {
  status: Type.Optional(Type.String({ description: 'active, expired, scheduled or disabled, computed on the service clock (another value -> 400; empty: no filter)' })),
  code: Type.Optional(Type.String({ description: 'part of the code, any case' })),
};

/** The list's `data` (app-api.md): flat counters beside the page; the envelope's `count` and `pagination` stay null. */
export const DiscountListSchema = Type.Object({
  discounts: Type.Array(DiscountSchema),
  total: Type.Integer(),
  page: Type.Integer(),
  limit: Type.Integer(),
});

const oneOfWords = (allowed: readonly string[]) => `must be one of ${allowed.join(', ')}`;
const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/**
 * The discount's own fields (C14.4), as a merchant sends them; `readDiscountFields` does the rest
 * (trimming, the value field the type needs, the end after the start, the products' store).
 * `type` is required on create by the reader, not here: its words for a missing type are the
 * enum's ("must be one of ..."), not "can't be blank".
 */
function discountFields(creating: boolean) {
  const code = nullable(Type.String({ pattern: '^\\s*\\S*\\s*$' }), {
    description: `trimmed, at most 100 characters, no spaces, unique in the store (any case)${creating ? '' : '; null or blank is refused'}`,
    'x-error': { pattern: 'must not contain spaces' },
  });
  return {
    code: creating ? code : Type.Optional(code),
    type: Type.Optional(StringEnum(DISCOUNT_TYPES, { description: creating ? 'required' : 'a new type needs its value field', 'x-error': oneOfWords(DISCOUNT_TYPES) })),
    status: Type.Optional(StringEnum(DISCOUNT_STATUSES, { description: 'default Active', 'x-error': oneOfWords(DISCOUNT_STATUSES) })),
    discountPercentage: Type.Optional(decimalSchema('required for Percentage, more than 0 (ignored for other types)', { scale: 2, nullable: true, max: 100 })),
    discountAmount: Type.Optional(decimalSchema('required for Flat, more than 0 (ignored for other types)', { scale: 2, nullable: true, max: 1e10 })),
    minOrderTotal: Type.Optional(decimalSchema('default 0', { scale: 2, max: 1e10 })),
    totalCoupons: Type.Optional(decimalSchema('0 (default) means unlimited', { integer: true, max: 2_147_483_647 })),
    usesPerCustomer: Type.Optional(decimalSchema('at least 1; null (default) means unlimited', { integer: true, nullable: true, max: 2_147_483_647 })),
    applyOnProducts: Type.Optional(nullable(Type.Array(Type.String({ pattern: UUID_PATTERN })), {
      description: `product UUIDs of the store, at most ${MAX_APPLY_ON_PRODUCTS}; [] or null: every product`,
      'x-error': 'must be an array of product UUIDs',
    })),
    startDate: Type.Optional(instantSchema('default now')),
    endDate: Type.Optional(instantSchema('after startDate', { nullable: true })),
  };
}

/** Merchant `POST /discounts`. */
export const discountCreateBody = Type.Object({
  ...discountFields(true),
  storeId: Type.Optional(Type.String({ description: 'the store, for the platform operator only' })),
});
/** Merchant `PUT /discounts/{id}`: the fields sent change, the merged record is checked whole. */
export const discountUpdateBody = Type.Object(discountFields(false));
export type DiscountCreateBody = Static<typeof discountCreateBody>;
export type DiscountUpdateBody = Static<typeof discountUpdateBody>;

/**
 * Whether a discount is `active` at `now`: the list filter's rule (discounts.repo.ts) for one record,
 * for checkout-style checks (C7.1 `POST /orders` with a `discount_code`), so both agree at the
 * boundary instants.
 */
export function isActiveAt(d: Pick<DiscountRow, 'status' | 'start_date' | 'end_date'>, now: Date): boolean {
  const t = now.getTime();
  return d.status === 'Active' && d.start_date.getTime() <= t && (d.end_date === null || d.end_date.getTime() >= t);
}

const isStatusFilter = (value: string): value is StatusFilter => (STATUS_FILTERS as readonly string[]).includes(value);

export async function listDiscountPage(deps: Deps, storeId: string, query: { status?: string; code?: string }, page: Page) {
  const status = query.status === undefined || query.status === '' ? undefined : query.status;
  if (status !== undefined && !isStatusFilter(status)) {
    throw badRequest('status must be active, expired, scheduled or disabled');
  }
  const code = query.code !== undefined && query.code !== '' ? query.code : undefined;
  const { rows, total } = await listDiscounts(deps.db, storeId, {
    status, code, now: deps.clock.now(), limit: page.limit, offset: page.offset,
  });
  return { discounts: rows.map(discountView), total, page: page.page, limit: page.limit };
}

const fieldsOf = (d: DiscountRow): DiscountFields => ({
  code: d.code,
  type: d.type,
  status: d.status,
  discountPercentage: d.discount_percentage === null ? null : String(d.discount_percentage),
  discountAmount: d.discount_amount === null ? null : String(d.discount_amount),
  minOrderTotal: String(d.min_order_total),
  totalCoupons: d.total_coupons,
  usesPerCustomer: d.uses_per_customer,
  applyOnProducts: d.apply_on_products,
  startDate: d.start_date,
  endDate: d.end_date,
});

function oneOf<V extends string>(body: Body, key: string, allowed: readonly V[]): V {
  const value = body[key];
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) throw fieldError(key, oneOfWords(allowed));
  return value as V;
}

function readProductIds(value: unknown): string[] {
  if (value === null) return [];
  if (!Array.isArray(value) || !value.every(isUuid)) throw fieldError('applyOnProducts', 'must be an array of product UUIDs');
  if (value.length > MAX_APPLY_ON_PRODUCTS) throw fieldError('applyOnProducts', `has more than ${MAX_APPLY_ON_PRODUCTS} products`);
  return [...new Set(value.map((id) => id.toLowerCase()))];
}

/**
 * The record's own fields (C14.4) sent in `raw`, laid over `current` (a create starts from the
 * defaults: status Active, no minimum, unlimited uses, starting now, no end), then checked whole:
 * the value field of the type is required and the other one cleared; the end after the start.
 */
export function readDiscountFields(raw: unknown, current: DiscountFields | null, now: Date): DiscountFields {
  const body = bodyObject(raw);
  const f: DiscountFields = current
    ? { ...current }
    : {
        code: '', type: '', status: 'Active', discountPercentage: null, discountAmount: null, minOrderTotal: '0', totalCoupons: 0,
        usesPerCustomer: null, applyOnProducts: [], startDate: now, endDate: null,
      };
  if (!current || has(body, 'code')) {
    f.code = requiredText(body, 'code', 100);
    if (/\s/.test(f.code)) throw fieldError('code', 'must not contain spaces');
  }
  if (!current || has(body, 'type')) f.type = oneOf(body, 'type', DISCOUNT_TYPES);
  if (has(body, 'status')) f.status = oneOf(body, 'status', DISCOUNT_STATUSES);
  const percentage = optionalDecimal(body, 'discountPercentage', { scale: 2, nullable: true, max: 100 });
  if (percentage !== undefined) f.discountPercentage = percentage;
  const amount = optionalDecimal(body, 'discountAmount', { scale: 2, nullable: true, max: 1e10 });
  if (amount !== undefined) f.discountAmount = amount;
  const minimum = optionalDecimal(body, 'minOrderTotal', { scale: 2, max: 1e10 });
  if (minimum !== undefined) f.minOrderTotal = minimum!;
  const total = optionalInteger(body, 'totalCoupons', { min: 0 });
  if (total !== undefined) f.totalCoupons = total!;
  const perCustomer = optionalInteger(body, 'usesPerCustomer', { min: 1, nullable: true });
  if (perCustomer !== undefined) f.usesPerCustomer = perCustomer;
  if (has(body, 'applyOnProducts')) f.applyOnProducts = readProductIds(body.applyOnProducts);
  const start = optionalInstant(body, 'startDate');
  if (start !== undefined) f.startDate = start!;
  const end = optionalInstant(body, 'endDate', { nullable: true });
  if (end !== undefined) f.endDate = end;

  if (f.type === 'Percentage') {
    if (f.discountPercentage === null || Number(f.discountPercentage) <= 0) throw fieldError('discountPercentage', 'is required for a Percentage discount: more than 0, at most 100');
  } else f.discountPercentage = null;
  if (f.type === 'Flat') {
    if (f.discountAmount === null || Number(f.discountAmount) <= 0) throw fieldError('discountAmount', 'is required for a Flat discount: more than 0');
  } else f.discountAmount = null;
  if (f.endDate && f.endDate.getTime() <= f.startDate.getTime()) throw fieldError('endDate', 'must be after startDate');
  return f;
}

/** Every product named must be the store's; checked when `applyOnProducts` is sent. */
async function checkProducts(q: Queryable, storeId: string, ids: string[]) {
  const found = await storeProductIds(q, storeId, ids);
  const unknown = ids.filter((id) => !found.has(id));
  if (unknown.length) throw fieldError('applyOnProducts', `names products that are not in this store: ${unknown.join(', ')}`);
}

const codeTaken = () => conflict('A discount with this code already exists in the store');

async function uniqueCode<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, 'discounts_store_code_key')) throw codeTaken();
    throw err;
  }
}

export async function createDiscount(deps: Deps, storeId: string, body: DiscountCreateBody): Promise<DiscountView> {
  const now = deps.clock.now();
  const f = readDiscountFields(body, null, now);
  await checkProducts(deps.db, storeId, f.applyOnProducts);
  return discountView(await uniqueCode(() => insertDiscount(deps.db, uuidv7(now.getTime()), storeId, f, now)));
}

/** `assertAccess` decides whether the caller may change a discount of that store (C7.1: 403). */
export async function updateDiscount(deps: Deps, id: string, sent: DiscountUpdateBody, assertAccess: (storeId: string) => void): Promise<DiscountView> {
  if (!isUuid(id)) throw notFound('Discount not found');
  // Read, merge and write under the row lock: two partial updates never lose each other's fields.
  return uniqueCode(() => deps.db.transaction(async (tx) => {
    const current = await findDiscount(tx, id, true);
    if (!current) throw notFound('Discount not found');
    assertAccess(current.store_id);
    const now = deps.clock.now();
    const f = readDiscountFields(sent, fieldsOf(current), now);
    if (has(sent, 'applyOnProducts')) await checkProducts(tx, current.store_id, f.applyOnProducts);
    return discountView(await updateDiscountRow(tx, current.id, f, now));
  }));
}
