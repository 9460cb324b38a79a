import { Type } from 'typebox';
import type { Queryable } from '../db/db.js';
import { nullable, Timestamp } from '../http/schemas.js';
import { namesAnUpload, releaseUploadNames, uploadNamesDropped, uploadNamesIn } from '../catalog/upload-references.js';
import { METAFIELD_TYPES, OWNER_TYPES, typedValue } from './types.js';

export interface MetafieldRow {
  id: string;
  store_id: string;
  owner_type: string;
  owner_id: string;
  namespace: string;
  key: string;
  type: string;
  value: string;
  app_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** app-api.md Metafield: `value` typed, `raw_value` the stored string. */
export function metafieldView(m: MetafieldRow) {
  return {
    id: m.id,
    namespace: m.namespace,
    key: m.key,
    value: typedValue(m.type, m.value),
    raw_value: m.value,
    type: m.type,
    owner_type: m.owner_type,
    owner_id: m.owner_id,
    app_id: m.app_id,
    created_at: m.created_at.toISOString(),
    updated_at: m.updated_at.toISOString(),
  };
}

/** app-api.md Metafield, as `metafieldView` writes it. */
export const MetafieldSchema = Type.Object({
  id: Type.String({ description: 'the metafield UUID' }),
  namespace: Type.String(),
  key: Type.String(),
  // Its JSON type follows `type` (C14.6): a number, true or false, any JSON value, or a string.
  value: Type.Unknown({ description: 'the value, typed by `type`: number_integer and number_decimal a number, boolean true or false, json any JSON value, the others a string' }),
  raw_value: Type.String({ description: 'the value as stored' }),
  type: Type.String({ description: `one of ${METAFIELD_TYPES.join(', ')}` }),
  owner_type: Type.String({ description: `one of ${OWNER_TYPES.join(', ')}` }),
  owner_id: Type.String({ description: 'the owner UUID (the store id for shop)' }),
  app_id: nullable(Type.String({ description: 'the app that created it; null when the merchant did' })),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

export interface MetafieldFilter {
  ownerType?: string;
  ownerId?: string;
  namespace?: string;
  key?: string;
}

/** Newest first, with the total for the envelope's `count` and `pagination`. */
export async function listMetafields(q: Queryable, storeId: string, f: MetafieldFilter, limit: number, offset: number) {
  const params: unknown[] = [storeId];
  const where = ['store_id = $1'];
  for (const [column, value] of [['owner_type', f.ownerType], ['owner_id', f.ownerId], ['namespace', f.namespace], ['key', f.key]] as const) {
    if (value === undefined) continue;
    params.push(value);
    where.push(`${column} = $${params.length}`);
  }
  const [page, total] = await Promise.all([
    q.query<MetafieldRow>(
      `SELECT * FROM metafields WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    ),
    q.query<{ n: number }>(`SELECT count(*)::int AS n FROM metafields WHERE ${where.join(' AND ')}`, params),
  ]);
  return { rows: page.rows, total: total.rows[0].n };
}

export async function findMetafield(q: Queryable, id: string): Promise<MetafieldRow | null> {
  const { rows } = await q.query<MetafieldRow>('SELECT * FROM metafields WHERE id = $1', [id]);
  return rows[0] ?? null;
}

export interface MetafieldWrite {
  id: string;
  ownerType: string;
  ownerId: string;
  namespace: string;
  key: string;
  type: string;
  raw: string;
}

/**
 * Inserts or updates every row in one statement (one round trip, one transaction). Rows go in a
 * fixed order so that two overlapping bulk writes lock their rows in the same order. An update keeps
 * the row's id, creator app and `created_at`.
 *
 * A value replaced may have embedded the store's uploads (a metafield is a text the reference rule
 * reads): those it no longer names are released (`releaseUploadNames`). The statement updates only
 * the stored values that name no upload (or are unchanged); the others it locks and leaves, and
 * only for those (rare) are the names read and the rows written again. A write replacing no upload
 * costs nothing more, and a value committed by another writer while this one waited is the one read.
 */
export async function upsertMetafields(q: Queryable, storeId: string, appId: string | null, rows: MetafieldWrite[], now: Date) {
  const sorted = [...rows].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  const byKey = await upsert(q, storeId, appId, sorted, now, true);
  const held = sorted.filter((r) => !byKey.has(keyOf(r)));
  if (held.length) {
    const col = <K extends keyof MetafieldWrite>(k: K) => held.map((r) => r[k]);
    const { rows: dropped } = await q.query<{ names: string[] }>(
      `SELECT ${uploadNamesDropped('m.value', 't.value')} AS names
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(owner_type, owner_id, namespace, key, value)
         JOIN metafields m ON m.store_id = $1 AND m.owner_type = t.owner_type AND m.owner_id = t.owner_id
                          AND m.namespace = t.namespace AND m.key = t.key`,
      [storeId, col('ownerType'), col('ownerId'), col('namespace'), col('key'), col('raw')],
    );
    await releaseUploadNames(q, storeId, dropped.flatMap((r) => r.names), now);
    for (const [key, row] of await upsert(q, storeId, appId, held, now, false)) byKey.set(key, row);
  }
  return rows.map((r) => byKey.get(keyOf(r))!);
}

/**
 * One upsert statement of sorted rows; the rows written, by key. `sparingUploads`: a stored value
 * that names an upload and would change is locked but not written (nor answered).
 */
async function upsert(q: Queryable, storeId: string, appId: string | null, sorted: MetafieldWrite[], now: Date, sparingUploads: boolean) {
  const col = <K extends keyof MetafieldWrite>(k: K) => sorted.map((r) => r[k]);
  const result = await q.query<MetafieldRow & { inserted: boolean }>(
    `INSERT INTO metafields (id, store_id, owner_type, owner_id, namespace, key, type, value, app_id, created_at, updated_at)
     SELECT t.id, $1, t.owner_type, t.owner_id, t.namespace, t.key, t.type, t.value, $2::uuid, $3, $3
       FROM unnest($4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
         AS t(id, owner_type, owner_id, namespace, key, type, value)
     ON CONFLICT ON CONSTRAINT metafields_owner_key
       DO UPDATE SET type = EXCLUDED.type, value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
       ${sparingUploads ? `WHERE metafields.value = EXCLUDED.value OR NOT ${namesAnUpload('metafields.value')}` : ''}
     RETURNING *, (xmax = 0) AS inserted`,
    [storeId, appId, now, col('id'), col('ownerType'), col('ownerId'), col('namespace'), col('key'), col('type'), col('raw')],
  );
  return new Map(result.rows.map((r) => [keyOf({ ownerType: r.owner_type, ownerId: r.owner_id, namespace: r.namespace, key: r.key }), r]));
}

const keyOf = (r: Pick<MetafieldWrite, 'ownerType' | 'ownerId' | 'namespace' | 'key'>) => JSON.stringify([r.ownerType, r.ownerId, r.namespace, r.key]);

/**
 * Deletes the metafields an owner had, in the transaction that deletes the owner: a metafield lives
 * only as long as its owner (C6.6: "the owner must exist in the store"), so an app or merchant
 * never reads values, often personal ones, of a customer that is gone. The store's uploads their
 * values named are released with them.
 */
export async function deleteOwnedMetafields(q: Queryable, storeId: string, ownerType: string, ownerId: string, now: Date): Promise<void> {
  const { rows } = await q.query<{ names: string[] }>(
    `DELETE FROM metafields WHERE store_id = $1 AND owner_type = $2 AND owner_id = $3 RETURNING ${uploadNamesIn('value')} AS names`,
    [storeId, ownerType, ownerId],
  );
  await releaseUploadNames(q, storeId, rows.flatMap((r) => r.names), now);
}
