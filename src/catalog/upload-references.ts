// When a store's uploaded image is deleted (docs/decisions.md Catalog, "An upload lives while its
// store uses it"). A URL is public and may be copied anywhere in the store (another variant, a
// product's images, a description), so dropping one reference does not free the file: a change that
// drops references asks, in its own transaction and after its writes, which of those uploads the
// store no longer references anywhere, and deletes their files after the commit.
import type { Config } from '../config.js';
import type { Queryable } from '../db/db.js';
import { discard, uploadPathOf } from './uploads.js';

/** The folder a store's uploads are kept in, under the uploads dir. */
export const storeUploadDir = (storeId: string) => ['variants', storeId];

/** Every image URL of the product: its images and its variants' main images. */
export async function productImageUrls(q: Queryable, productId: string): Promise<string[]> {
  const { rows } = await q.query<{ url: string }>(
    `SELECT src AS url FROM product_images WHERE product_id = $1
     UNION SELECT main_image_url FROM variants WHERE product_id = $1 AND main_image_url IS NOT NULL`,
    [productId],
  );
  return rows.map((r) => r.url);
}

/**
 * Of `urls` (references the caller's change dropped), the files of the store's own uploads that
 * nothing of the store references any more: an image field (variants, product images, collections,
 * pages), a menu item's link, or a text that may embed it (product, collection and page bodies,
 * metafield values). Run after the change's writes, in its transaction; the caller deletes the files
 * after the commit (`discardFiles`), so a rolled-back change deletes nothing.
 *
 * Changes that free uploads of one store take turns (held to the commit): two changes each dropping
 * one of the last two references would otherwise each see the other's reference and keep the file.
 */
export async function unreferencedUploads(tx: Queryable, config: Config, storeId: string, urls: (string | null)[]): Promise<string[]> {
  const own = new Map<string, string>();
  for (const url of urls) {
    const path = url ? uploadPathOf(config, url, storeUploadDir(storeId)) : null;
    if (url && path) own.set(url, path);
  }
  if (own.size === 0) return [];
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`uploads:${storeId}`]);
  const { rows } = await tx.query<{ url: string }>(
    `SELECT u.url FROM unnest($2::text[]) AS u(url)
      WHERE NOT EXISTS (SELECT 1 FROM variants v WHERE v.main_image_url = u.url AND v.store_id = $1)
        AND NOT EXISTS (SELECT 1 FROM product_images i JOIN products p ON p.id = i.product_id WHERE i.src = u.url AND p.store_id = $1)
        AND NOT EXISTS (SELECT 1 FROM products p WHERE p.store_id = $1 AND strpos(p.body_html, u.url) > 0)
        AND NOT EXISTS (SELECT 1 FROM collections c WHERE c.store_id = $1 AND (c.image_src = u.url OR strpos(c.body_html, u.url) > 0))
        AND NOT EXISTS (SELECT 1 FROM pages g WHERE g.store_id = $1
                          AND (g.seo_image = u.url OR g.link = u.url OR strpos(g.content, u.url) > 0))
        AND NOT EXISTS (SELECT 1 FROM menus m WHERE m.store_id = $1 AND m.url = u.url)
        AND NOT EXISTS (SELECT 1 FROM metafields f WHERE f.store_id = $1 AND strpos(f.value, u.url) > 0)`,
    [storeId, [...own.keys()]],
  );
  return rows.map((r) => own.get(r.url)!);
}

export async function discardFiles(paths: string[]): Promise<void> {
  for (const path of paths) await discard(path);
}
