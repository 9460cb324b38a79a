// The storefront's SQL: its routes take no credential and are the busiest writes a store sees
// (every page view), so both statements are named (planned once per connection, db.ts).
import type { Queryable } from '../db/db.js';
import { insertRow } from '../db/sql.js';

/** The store of a storefront slug (stored lowercase), or null. */
export async function storeIdBySlug(q: Queryable, slug: string): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>('SELECT id FROM stores WHERE slug = $1', [slug.toLowerCase()], { name: 'storefront_store_by_slug' });
  return rows[0]?.id ?? null;
}

export interface StorefrontEventRow {
  id: string;
  store_id: string;
  type: string;
  session_id: string;
  source: string | null;
  path: string | null;
  occurred_at: Date;
  created_at: Date;
}

export async function insertStorefrontEvent(q: Queryable, row: StorefrontEventRow): Promise<void> {
  await insertRow(q, 'storefront_events', { ...row }, { name: 'storefront_event_insert' });
}
