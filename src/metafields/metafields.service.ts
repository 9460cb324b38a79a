// Metafields bulk upsert (C6.6): 1 to 250 items, all or nothing. Every item is checked (shape,
// type and value, owner in the store) before anything is written; the first invalid one is a 400
// envelope error naming its index, and nothing is written. Then one statement writes them all.
import type { Queryable } from '../db/db.js';
import { badRequest } from '../http/errors.js';
import { isUuid, uuidv7 } from '../ids.js';
import { metafieldView, upsertMetafields, type MetafieldWrite } from './metafields.repo.js';
import { isMetafieldType, isOwnerType, METAFIELD_TYPES, OWNER_TYPES, rawValue, type OwnerType } from './types.js';

export const MAX_BULK = 250;
const NAMESPACE = /^[A-Za-z0-9_.:$-]{1,255}$/;
const KEY = /^[A-Za-z0-9_.-]{1,64}$/;

const itemError = (index: number, message: string) => badRequest(`metafields[${index}]: ${message}`);

interface Pending extends Omit<MetafieldWrite, 'ownerId'> {
  index: number;
  ownerRef: string;
  ownerId?: string;
}

/** One item's fields, or what is wrong with it; the owner's existence is checked afterwards. */
function readItem(item: unknown, index: number): Pending | string {
  if (!item || typeof item !== 'object' || Array.isArray(item)) return 'must be an object';
  const it = item as Record<string, unknown>;
  const ownerType = it.ownerType ?? it.owner_type;
  if (!isOwnerType(ownerType)) return `ownerType must be one of ${OWNER_TYPES.join(', ')}`;
  const ownerRaw = it.ownerId ?? it.owner_id;
  const ownerRef = typeof ownerRaw === 'number' && Number.isSafeInteger(ownerRaw) ? String(ownerRaw) : ownerRaw;
  if (typeof ownerRef !== 'string' || ownerRef.trim() === '') return "ownerId can't be blank";
  if (typeof it.namespace !== 'string' || !NAMESPACE.test(it.namespace)) return 'namespace must be 1 to 255 letters, digits or _ - . : $';
  if (typeof it.key !== 'string' || !KEY.test(it.key)) return 'key must be 1 to 64 letters, digits or _ - .';
  // Both become keys of the objects apps receive (an order's `metafields`, grouped by namespace):
  // `__proto__` there is a prototype to many JSON readers' merges, never a name of data.
  if (it.namespace === '__proto__' || it.key === '__proto__') return 'namespace and key must not be __proto__';
  if (!isMetafieldType(it.type)) return `type must be one of ${METAFIELD_TYPES.join(', ')}`;
  const value = rawValue(it.type, it.value);
  if ('error' in value) return `value ${value.error}`;
  return { index, id: uuidv7(), ownerType, ownerRef: ownerRef.trim(), namespace: it.namespace, key: it.key, type: it.type, raw: value.raw };
}

/** Owner tables; products and variants are also found by their numeric id (C6.1, C14.2). */
const OWNER_TABLES: Record<Exclude<OwnerType, 'shop'>, { table: string; numeric: boolean }> = {
  product: { table: 'products', numeric: true },
  variant: { table: 'variants', numeric: true },
  collection: { table: 'collections', numeric: false },
  customer: { table: 'customers', numeric: false },
  order: { table: 'orders', numeric: false },
  page: { table: 'pages', numeric: false },
};

/**
 * Maps owner references of one type to their UUIDs in the store (missing ones are absent from the
 * map): one query per owner type.
 */
export async function resolveOwnerIds(q: Queryable, storeId: string, ownerType: OwnerType, refs: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (ownerType === 'shop') {
    for (const ref of refs) if (ref.toLowerCase() === storeId.toLowerCase()) found.set(ref, storeId);
    return found;
  }
  const { table, numeric } = OWNER_TABLES[ownerType];
  const uuids = refs.filter(isUuid).map((r) => r.toLowerCase());
  const nums = numeric ? refs.filter((r) => /^[1-9]\d{0,14}$/.test(r)).map(Number) : [];
  if (uuids.length === 0 && nums.length === 0) return found;
  const { rows } = await q.query<{ id: string; num_id?: number }>(
    `SELECT id${numeric ? ', num_id' : ''} FROM ${table}
      WHERE store_id = $1 AND (id = ANY($2::uuid[])${numeric ? ' OR num_id = ANY($3::bigint[])' : ''})`,
    numeric ? [storeId, uuids, nums] : [storeId, uuids],
  );
  const byKey = new Map<string, string>();
  for (const r of rows) {
    byKey.set(r.id, r.id);
    if (r.num_id !== undefined) byKey.set(String(r.num_id), r.id);
  }
  for (const ref of refs) {
    const id = byKey.get(ref.toLowerCase());
    if (id) found.set(ref, id);
  }
  return found;
}

export interface BulkResult {
  metafields: ReturnType<typeof metafieldView>[];
  created: number;
  updated: number;
}

/** Bulk items that passed every check, owners resolved: what `writeBulk` writes. */
export type CheckedItems = (Pending & { ownerId: string })[];

/** The whole bulk upsert inside the caller's transaction. `appId` is null for merchant writes. */
export async function bulkUpsert(tx: Queryable, storeId: string, appId: string | null, raw: unknown, now: Date): Promise<BulkResult> {
  return writeBulk(tx, storeId, appId, await checkBulk(tx, storeId, raw), now);
}

/**
 * Every check of a bulk upsert (shape, type and value, owner in the store, repeats), nothing
 * written: the first invalid item, by index, is a 400 naming it.
 */
export async function checkBulk(tx: Queryable, storeId: string, raw: unknown): Promise<CheckedItems> {
  const body = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  const list = body?.metafields;
  if (!Array.isArray(list) || list.length < 1 || list.length > MAX_BULK) {
    throw badRequest(`metafields must be an array of 1 to ${MAX_BULK} items`);
  }
  // index -> the first thing wrong with that item; the lowest index is reported.
  const problems = new Map<number, string>();
  const items: Pending[] = [];
  list.forEach((item, index) => {
    const read = readItem(item, index);
    if (typeof read === 'string') problems.set(index, read);
    else items.push(read);
  });

  const byType = new Map<OwnerType, Pending[]>();
  for (const item of items) byType.set(item.ownerType as OwnerType, [...(byType.get(item.ownerType as OwnerType) ?? []), item]);
  for (const [ownerType, group] of byType) {
    const ids = await resolveOwnerIds(tx, storeId, ownerType, [...new Set(group.map((i) => i.ownerRef))]);
    for (const item of group) {
      item.ownerId = ids.get(item.ownerRef);
      if (!item.ownerId) problems.set(item.index, `ownerId does not name a ${ownerType} of this store`);
    }
  }
  // A UUID and the numeric id of one owner name the same owner.
  const seen = new Map<string, number>();
  for (const item of items) {
    if (!item.ownerId) continue;
    const k = JSON.stringify([item.ownerType, item.ownerId, item.namespace, item.key]);
    const first = seen.get(k);
    if (first !== undefined) problems.set(item.index, `repeats metafields[${first}] (same owner, namespace and key)`);
    else seen.set(k, item.index);
  }
  if (problems.size) {
    const index = Math.min(...problems.keys());
    throw itemError(index, problems.get(index)!);
  }

  return items.map((i) => ({ ...i, ownerId: i.ownerId! }));
}

/**
 * The tables of the owners a bulk write locks, in the order it locks them: the order every other
 * transaction locking several of them takes (a refund locks its order, then the products it
 * restocks; stock and product updates lock products before their variants). The store (`shop`) is
 * never deleted, so it is not locked.
 */
const OWNER_LOCK_ORDER = ['order', 'product', 'variant', 'collection', 'customer', 'page'] as const;

/**
 * Locks the owners of checked items (FOR KEY SHARE, each table in id order) until the transaction
 * ends, and answers the items whose owner is gone since `checkBulk` looked. An owner's deletion
 * locks the owner (FOR UPDATE) and then deletes its metafields: with the owner held here, a delete
 * that came first has committed and the owner is gone (a 400 below), and one that comes later
 * waits for this write to commit, then deletes what it wrote. Without it, a write that checked
 * the owner just before a concurrent delete inserted after it, and left a metafield of no owner.
 * A variant is deleted with its product (deleteProduct locks only the product), so the product
 * of each variant owner is locked too. KEY SHARE is the lock a foreign key takes: it waits only
 * for deletes and FOR UPDATE, not for ordinary updates of the owner, nor for other writers.
 */
async function lockOwners(tx: Queryable, storeId: string, items: CheckedItems): Promise<CheckedItems> {
  const idsOf = (type: OwnerType) => [...new Set(items.filter((i) => i.ownerType === type).map((i) => i.ownerId))];
  const variantIds = idsOf('variant');
  const productsOfVariants = variantIds.length
    ? (await tx.query<{ product_id: string }>('SELECT product_id FROM variants WHERE id = ANY($1::uuid[])', [variantIds])).rows.map((r) => r.product_id)
    : [];
  const held = new Set<string>();
  for (const type of OWNER_LOCK_ORDER) {
    const ids = type === 'product' ? [...new Set([...idsOf(type), ...productsOfVariants])] : idsOf(type);
    if (!ids.length) continue;
    // Unnamed: a named statement on the embedded database runs as EXECUTE with literals (src/db/pglite.ts), which take no arrays.
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM ${OWNER_TABLES[type].table} WHERE store_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR KEY SHARE`,
      [storeId, ids],
    );
    for (const r of rows) held.add(`${type}:${r.id}`);
  }
  return items.filter((i) => i.ownerType !== 'shop' && !held.has(`${i.ownerType}:${i.ownerId}`));
}

/**
 * Writes checked items in one statement, their owners locked first (`lockOwners`): an owner
 * deleted since the check is the check's 400, and nothing is written.
 */
export async function writeBulk(tx: Queryable, storeId: string, appId: string | null, items: CheckedItems, now: Date): Promise<BulkResult> {
  const ownerless = await lockOwners(tx, storeId, items);
  if (ownerless.length) {
    const first = ownerless.reduce((a, b) => (a.index < b.index ? a : b));
    throw itemError(first.index, `ownerId does not name a ${first.ownerType} of this store`);
  }
  const rows = await upsertMetafields(tx, storeId, appId, items, now);
  const created = rows.filter((r) => r.inserted).length;
  return { metafields: rows.map(metafieldView), created, updated: rows.length - created };
}
