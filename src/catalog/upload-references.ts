// When a store's uploaded image is deleted (docs/decisions.md Catalog, "An upload lives while its
// store uses it"). A URL is public and may be copied anywhere in the store (another variant, a
// product's images, a description), in any form that still reaches the file (another host, a query
// string, percent-encoded, HTML-escaped), so dropping one reference does not free the file.
//
// A change that drops a reference to one of the store's uploads only records the file, in its own
// transaction (`releaseUploads`): a rolled-back change records nothing. The `upload-purge` job
// (uploads.jobs.ts) deletes a recorded file once the grace period has passed and nothing of the store
// names it (`referencedUploadNames`). A write that copied the URL while its last reference was being
// dropped has committed long before then, so the job sees it and keeps the file.
import type { Config } from '../config.js';
import type { Queryable } from '../db/db.js';

/** The folder a store's uploads are kept in, under the uploads dir. */
export const storeUploadDir = (storeId: string) => ['variants', storeId];

/**
 * The name the service gives an upload (`keepImage`): a UUID and the detected type's extension, in
 * lower case. One pattern for JavaScript and PostgreSQL (the syntax both read alike).
 */
const NAME_PATTERN = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\.(?:jpg|png|gif|webp)';
const UPLOAD_NAME = new RegExp(`^${NAME_PATTERN}$`);

/** Every image URL of the product: its images and its variants' main images. */
export async function productImageUrls(q: Queryable, productId: string): Promise<string[]> {
  const { rows } = await q.query<{ url: string }>(
    `SELECT src AS url FROM product_images WHERE product_id = $1
     UNION SELECT main_image_url FROM variants WHERE product_id = $1 AND main_image_url IS NOT NULL`,
    [productId],
  );
  return rows.map((r) => r.url);
}

const decodePath = (path: string) => {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
};

/**
 * The name (`{uuid}.{ext}`, lower case) of the store's own upload that `url` points at, null for any
 * other URL. Read as loosely as the uploads route serves: any host, scheme or port, a query or
 * fragment, percent-encoded segments, any case. Only `uploads/variants/{storeId}/...`: a URL is
 * public, and another store's file named in this store's fields is never this store's to free.
 */
export function uploadNameOf(config: Config, storeId: string, url: string | null): string | null {
  if (!url) return null;
  let path: string;
  try {
    path = new URL(url, config.baseUrl).pathname;
  } catch {
    return null;
  }
  // Decoded whole, then split: the route serves `variants%2F{storeId}%2F{name}` too.
  const [uploads, variants, store, name] = decodePath(path).toLowerCase().split('/').slice(-4);
  if (uploads !== 'uploads' || variants !== 'variants' || store !== storeId.toLowerCase()) return null;
  return UPLOAD_NAME.test(name ?? '') ? name : null;
}

/**
 * Records the store's uploads among `urls` (references the caller's change dropped) for the
 * `upload-purge` job, in the caller's transaction. Nothing is checked or deleted here: the job
 * checks after the grace period, when every write that raced this one has committed. A file dropped
 * again while it waits starts its grace again.
 */
export async function releaseUploads(tx: Queryable, config: Config, storeId: string, urls: (string | null)[], now: Date): Promise<void> {
  await releaseUploadNames(tx, storeId, urls.map((url) => uploadNameOf(config, storeId, url)).filter((n): n is string => n !== null), now);
}

/**
 * Records upload names (`{uuid}.{ext}`) a change dropped from the store's texts (`uploadNamesIn`),
 * as `releaseUploads` does URLs. No statement when there are none, as for most changes. A name that
 * is no file of the store's own folder releases nothing: the job only ever deletes
 * `uploads/variants/{storeId}/{name}`, and only once nothing of the store names it.
 */
export async function releaseUploadNames(tx: Queryable, storeId: string, names: Iterable<string>, now: Date): Promise<void> {
  const distinct = [...new Set(names)];
  if (distinct.length === 0) return;
  await tx.query(
    `INSERT INTO upload_releases (store_id, name, released_at) SELECT $1, name, $3 FROM unnest($2::text[]) AS name
     ON CONFLICT (store_id, name) DO UPDATE SET released_at = GREATEST(upload_releases.released_at, EXCLUDED.released_at)`,
    [storeId, distinct.sort(), now],
  );
}

// How a browser, then the uploads route, reads a file name written in a field: HTML character
// references decoded once (descriptions are HTML: `&#46;`, `&period;`), then `%XX` decoded once (the
// route decodes the path once), then any case (a case-insensitive disk serves `.PNG`; reading more
// as a reference only keeps a file longer). Only references and escapes of ASCII characters are
// decoded: the names are ASCII, and `chr` refuses 0.
const HTML_DECODED = (col: string) => `(SELECT string_agg(CASE
      WHEN r.m[2] IS NOT NULL AND length(r.m[2]) <= 3 AND r.m[2]::int BETWEEN 1 AND 127 THEN chr(r.m[2]::int)
      WHEN r.m[4] IS NOT NULL AND length(r.m[4]) <= 2 AND ('x' || lpad(r.m[4], 2, '0'))::bit(8)::int BETWEEN 1 AND 127
        THEN chr(('x' || lpad(r.m[4], 2, '0'))::bit(8)::int)
      WHEN r.m[5] IS NOT NULL THEN '.'
      WHEN r.m[6] IS NOT NULL THEN '%'
      ELSE coalesce(r.m[1], r.m[3], r.m[7]) END, '' ORDER BY r.i)
    FROM regexp_matches(${col}, '(&#0*([0-9]+);?)|(&#[xX]0*([0-9a-fA-F]+);?)|(&period;)|(&percnt;)|([^&]+|&)', 'g') WITH ORDINALITY AS r(m, i))`;
const PERCENT_DECODED = (col: string) => `(SELECT string_agg(CASE
      WHEN r.m[2] IS NOT NULL AND ('x' || r.m[2])::bit(8)::int BETWEEN 1 AND 127 THEN chr(('x' || r.m[2])::bit(8)::int)
      ELSE coalesce(r.m[1], r.m[3]) END, '' ORDER BY r.i)
    FROM regexp_matches(${col}, '(%([0-9A-Fa-f]{2}))|([^%]+|%)', 'g') WITH ORDINALITY AS r(m, i))`;
// Decoded only when the text holds something the decoders change: a numeric reference, one of the
// two named ones, or a `%`. A description's `&amp;` and `&nbsp;` (most have them) decode to nothing
// the names are made of, so such a text is searched as it is, without the tokenising.
const AS_READ = (col: string) =>
  `lower(CASE WHEN strpos(${col}, '%') > 0 OR strpos(${col}, '&#') > 0 OR strpos(${col}, '&period;') > 0 OR strpos(${col}, '&percnt;') > 0
    THEN coalesce(${PERCENT_DECODED(`coalesce(${HTML_DECODED(col)}, '')`)}, '') ELSE ${col} END)`;

/**
 * SQL: whether the text in `col` names an upload as the reference rule reads it (`AS_READ`): the
 * cheap test a writer of a text makes before it looks for what it drops. Without a `%`, a numeric
 * reference or `&period;`/`&percnt;` in the text it is a lower() and a regular expression.
 */
export const namesAnUpload = (col: string) => `(${AS_READ(col)} ~ '${NAME_PATTERN}')`;

/**
 * SQL: the upload names (`{uuid}.{ext}`) in the text in `col`, read as the reference rule reads a
 * field (`AS_READ`), as a text[] (empty for NULL). A change that drops or replaces a text releases
 * these (`releaseUploadNames`): every name `referencedUploadNames` would have found there, so an
 * upload used only in that text is not left on disk. Any such name is released, whatever folder
 * the URL around it names: the job checks the store's fields again before it deletes anything.
 */
export const uploadNamesIn = (col: string) =>
  `ARRAY(SELECT DISTINCT m.n[1] FROM regexp_matches(${AS_READ(col)}, '(${NAME_PATTERN})', 'g') AS m(n))`;

/** SQL: the names in `before` that `after` no longer has (`uploadNamesIn`), as a text[]. */
export const uploadNamesDropped = (before: string, after: string) =>
  `(CASE WHEN ${namesAnUpload(before)} THEN ARRAY(SELECT unnest(${uploadNamesIn(before)}) EXCEPT SELECT unnest(${uploadNamesIn(after)})) ELSE '{}'::text[] END)`;

/**
 * Of `names` (the store's uploads, `{uuid}.{ext}`), those something of the store still names: an
 * image field (variants, product images, collections, pages), a menu item's link, or a text that may
 * embed it (product, collection and page bodies, metafield values). A field names a file when the
 * file's name is in it as read (`AS_READ`): the name is a fresh UUID, so whatever host, path prefix,
 * query or fragment surrounds it, it is that file.
 */
export async function referencedUploadNames(q: Queryable, storeId: string, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const { rows } = await q.query<{ name: string }>(
    `WITH fields(t) AS (
       SELECT v.main_image_url FROM products p JOIN variants v ON v.product_id = p.id
        WHERE p.store_id = $1 AND v.store_id = $1 AND v.main_image_url IS NOT NULL
       UNION ALL SELECT i.src FROM products p JOIN product_images i ON i.product_id = p.id WHERE p.store_id = $1
       UNION ALL SELECT body_html FROM products WHERE store_id = $1 AND body_html IS NOT NULL
       UNION ALL SELECT image_src FROM collections WHERE store_id = $1 AND image_src IS NOT NULL
       UNION ALL SELECT body_html FROM collections WHERE store_id = $1 AND body_html IS NOT NULL
       UNION ALL SELECT seo_image FROM pages WHERE store_id = $1 AND seo_image IS NOT NULL
       UNION ALL SELECT link FROM pages WHERE store_id = $1 AND link IS NOT NULL
       UNION ALL SELECT content FROM pages WHERE store_id = $1 AND content IS NOT NULL
       UNION ALL SELECT url FROM menus WHERE store_id = $1 AND url IS NOT NULL
       UNION ALL SELECT value FROM metafields WHERE store_id = $1 AND value IS NOT NULL
     )
     -- Each field is read once (OFFSET 0 keeps the planner from reading it again for every name).
     SELECT DISTINCT hit.name
       FROM fields,
            LATERAL (SELECT ${AS_READ('fields.t')} AS t OFFSET 0) AS seen,
            LATERAL (SELECT n.name FROM unnest($2::text[]) AS n(name) WHERE strpos(seen.t, n.name) > 0) AS hit`,
    [storeId, names],
  );
  return new Set(rows.map((r) => r.name));
}
