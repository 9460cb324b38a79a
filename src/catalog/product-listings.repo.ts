// Product listings' SQL (C6.2): a product on an app's sales channel, one row per app and product.
import type { Queryable } from '../db/db.js';

export interface ListingRow {
  id: string;
  product_id: string;
  external_id: string | null;
  status: string;
  /** True when this call made the row, false when it was there already. */
  inserted: boolean;
}

/**
 * Lists the product for the app, or finds its listing; `externalId` undefined keeps the listing's
 * own. One statement: two concurrent first listings still make one row (one inserted, one found).
 */
export async function upsertListing(
  q: Queryable,
  l: { id: string; storeId: string; appId: string; productId: string; externalId: string | null | undefined; now: Date },
): Promise<ListingRow> {
  const { rows } = await q.query<ListingRow>(
    `INSERT INTO product_listings (id, store_id, app_id, product_id, external_id, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 'active', $6, $6)
     ON CONFLICT (app_id, product_id) DO UPDATE
       SET external_id = CASE WHEN $7 THEN EXCLUDED.external_id ELSE product_listings.external_id END, updated_at = $6
     RETURNING id, product_id, external_id, status, (xmax = 0) AS inserted`,
    [l.id, l.storeId, l.appId, l.productId, l.externalId ?? null, l.now, l.externalId !== undefined],
  );
  return rows[0];
}
