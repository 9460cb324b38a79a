// Manual collections (app-api.md Collection; POST /api/v1/collections.json; C7.1, C14.5): the view,
// the body rules and the SQL. Rule-based collections do not exist.
import { Type } from 'typebox';
import type { Queryable } from '../db/db.js';
import { badRequest } from '../http/errors.js';
import { nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { uuidv7 } from '../ids.js';
import { FieldErrors, has, httpUrlSchema, idText, isCatalogId, isHttpUrl, str, textSchema, unwrap, type Body } from './input.js';

export interface CollectionRow {
  id: string;
  store_id: string;
  title: string;
  handle: string;
  body_html: string;
  image_src: string | null;
  image_alt: string | null;
  seo_title: string | null;
  seo_description: string | null;
  published_scope: string;
  sort_order: string;
  template_suffix: string | null;
  published_at: Date;
  created_at: Date;
  updated_at: Date;
  products_count: number;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** `description`: the text of `body_html`, without markup. */
export function plainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, e: string) => ENTITIES[e])
    .replace(/\s+/g, ' ')
    .trim();
}

/** app-api.md Collection, field for field. `url` is the storefront path of the collection. */
export function collectionView(c: CollectionRow) {
  const description = plainText(c.body_html);
  return {
    id: c.id,
    title: c.title,
    handle: c.handle,
    body_html: c.body_html,
    description,
    published_at: c.published_at.toISOString(),
    published_scope: c.published_scope,
    sort_order: c.sort_order,
    collection_type: 'custom' as const,
    url: `/collections/${encodeURIComponent(c.handle)}`,
    template_suffix: c.template_suffix,
    image: { alt: c.image_alt, src: c.image_src },
    products_count: c.products_count,
    seo: { title: c.seo_title ?? c.title, description: c.seo_description ?? description, image: c.image_src },
    updated_at: c.updated_at.toISOString(),
  };
}

/** app-api.md Collection, as `collectionView` writes it. */
export const CollectionSchema = Type.Object({
  id: Type.String({ description: 'the collection UUID' }),
  title: Type.String(),
  handle: Type.String(),
  body_html: Type.String(),
  description: Type.String({ description: 'the text of body_html, without markup' }),
  published_at: Timestamp(),
  published_scope: Type.String(),
  sort_order: Type.String(),
  collection_type: StringEnum(['custom'], { description: 'always custom: rule-based collections do not exist' }),
  url: Type.String({ description: 'the storefront path, /collections/{handle}' }),
  template_suffix: nullable(Type.String()),
  image: Type.Object({ alt: nullable(Type.String()), src: nullable(Type.String()) }),
  products_count: Type.Integer(),
  seo: Type.Object({
    title: Type.String({ description: 'the SEO title, else the title' }),
    description: Type.String({ description: 'the SEO description, else the description' }),
    image: nullable(Type.String()),
  }),
  updated_at: Timestamp(),
});

/** app-api.md: the default handle is the title lowercased with spaces replaced by `-`. */
export const collectionHandle = (text: string) => text.trim().toLowerCase().replace(/\s+/g, '-');

export interface CollectionInput {
  title: string;
  handle: string;
  body_html: string;
  image_src: string | null;
  image_alt: string | null;
  template_suffix: string | null;
  seo_title: string | null;
  seo_description: string | null;
}

/**
 * The body `readCollectionInput` reads. Its failures are 422s in the reader's words, so the routes
 * run the reader before the schema's verdict (src/catalog/reader-first.ts).
 */
export const COLLECTION_BODY = 'Flat, or wrapped as `{ collection: { ... } }`';
export const CollectionBody = Type.Object({
  title: textSchema('required (422 `{ errors: { title: ["can\'t be blank"] } }` without it); trimmed', 255),
  body_html: Type.Optional(textSchema('HTML', 512 * 1024)),
  handle: Type.Optional(textSchema('default: the title lowercased, spaces replaced by -', 255)),
  image: Type.Optional(Type.Unsafe<string | { src?: string; alt?: string | null } | null>({
    type: ['string', 'object', 'null'],
    maxLength: 2048,
    required: ['src'],
    properties: {
      src: httpUrlSchema('the image'),
      alt: textSchema('the alternative text', 512),
    },
    description: 'the image URL (http or https), or `{ src, alt }`; null or "" for none',
    'x-error': { type: 'must be an http or https URL' },
  })),
  template_suffix: Type.Optional(textSchema('the storefront template suffix', 255)),
  seo: Type.Optional(Type.Unsafe<{ title?: string | null; description?: string | null } | null>({
    type: ['object', 'null'],
    properties: { title: textSchema('default: the title', 255), description: textSchema('default: the description', 1000) },
    description: 'the SEO title and description',
    'x-error': { type: 'must be an object' },
  })),
}, { description: COLLECTION_BODY });

/** The body `readProductIds` reads. */
export const ProductIdsBody = Type.Object({
  productIds: Type.Array(Type.Unsafe<string | number>({ type: ['string', 'integer'], description: 'a product UUID (or numeric id) of the store' }), {
    minItems: 1, maxItems: 250,
    description: '1 to 250 products, added after the ones the collection has, in this order; duplicates are read once',
  }),
}, { description: 'Flat, or wrapped as `{ collection: { ... } }`' });

/**
 * `title` (required), `body_html`, `handle`, `image` (a URL, or `{ src, alt }`), `template_suffix`,
 * `seo` `{ title, description }`. Every failed check is a 422 (app-api.md Errors: a collection with
 * a missing title is a validation failure); a body that is not an object is a 400.
 */
export function readCollectionInput(raw: unknown): CollectionInput {
  const body = unwrap(raw, 'collection');
  const errors = new FieldErrors();
  const title = str(errors, body, 'title', { required: true, max: 255 });
  const bodyHtml = str(errors, body, 'body_html', { max: 512 * 1024, nullable: true });
  const handleRaw = str(errors, body, 'handle', { max: 255, nullable: true });
  let handle = typeof title === 'string' ? collectionHandle(title) : '';
  if (typeof handleRaw === 'string' && handleRaw.trim() !== '') handle = collectionHandle(handleRaw);
  let imageSrc: string | null = null;
  let imageAlt: string | null = null;
  if (has(body, 'image') && body.image !== null && body.image !== '') {
    const image = body.image;
    const src = typeof image === 'object' && !Array.isArray(image) ? (image as Body).src : image;
    if (!isHttpUrl(src)) errors.add('image', 'must be an http or https URL');
    else imageSrc = src;
    if (typeof image === 'object' && !Array.isArray(image)) {
      const alt = str(errors, image as Body, 'alt', { max: 512, nullable: true, label: 'image.alt' });
      imageAlt = typeof alt === 'string' ? alt : null;
    }
  }
  const suffix = str(errors, body, 'template_suffix', { max: 255, nullable: true });
  let seoTitle: string | null = null;
  let seoDescription: string | null = null;
  if (has(body, 'seo') && body.seo !== null) {
    if (typeof body.seo !== 'object' || Array.isArray(body.seo)) errors.add('seo', 'must be an object');
    else {
      seoTitle = str(errors, body.seo as Body, 'title', { max: 255, nullable: true, label: 'seo.title' }) ?? null;
      seoDescription = str(errors, body.seo as Body, 'description', { max: 1000, nullable: true, label: 'seo.description' }) ?? null;
    }
  }
  errors.check('unprocessable');
  return {
    title: (title as string).trim(),
    handle,
    body_html: bodyHtml ?? '',
    image_src: imageSrc,
    image_alt: imageAlt,
    template_suffix: suffix || null,
    seo_title: seoTitle || null,
    seo_description: seoDescription || null,
  };
}

const COLUMNS = `c.*, (SELECT count(*)::int FROM collection_products cp WHERE cp.collection_id = c.id) AS products_count`;

export async function findCollection(q: Queryable, id: string): Promise<CollectionRow | null> {
  const { rows } = await q.query<CollectionRow>(`SELECT ${COLUMNS} FROM collections c WHERE c.id = $1`, [id]);
  return rows[0] ?? null;
}

export async function insertCollection(q: Queryable, storeId: string, input: CollectionInput, now: Date): Promise<CollectionRow> {
  const id = uuidv7(now.getTime());
  await q.query(
    `INSERT INTO collections (id, store_id, title, handle, body_html, image_src, image_alt, template_suffix, seo_title, seo_description,
                              published_at, created_at, updated_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$11,$11)`,
    [id, storeId, input.title, input.handle, input.body_html, input.image_src, input.image_alt, input.template_suffix, input.seo_title, input.seo_description, now],
  );
  return (await findCollection(q, id))!;
}

/** `{ productIds }`: 1 to 250 product UUIDs (numeric ids accepted too), duplicates read once. */
export function readProductIds(raw: unknown): string[] {
  const body = unwrap(raw, 'collection');
  const list = body.productIds;
  if (!Array.isArray(list) || list.length === 0 || list.length > 250) throw badRequest('productIds must be an array of 1 to 250 product ids');
  const ids = list.map(idText);
  ids.forEach((id, i) => {
    if (!isCatalogId(id)) throw badRequest(`productIds[${i}] is not a product id`);
  });
  return [...new Set(ids as string[])];
}

/**
 * Adds products of the collection's store, after the ones it has, in the order given; products
 * already in it stay where they are. A product that is not the store's -> 400 naming it.
 */
export async function addProducts(q: Queryable, collection: CollectionRow, refs: string[], now: Date): Promise<CollectionRow> {
  // First, so that it locks the collection to the commit: additions to one collection take turns,
  // and each reads the last position the previous one wrote (else they shared positions).
  await q.query('UPDATE collections SET updated_at = $2 WHERE id = $1', [collection.id, now]);
  const uuids = refs.filter((r) => r.includes('-'));
  const nums = refs.filter((r) => !r.includes('-')).map(Number);
  // KEY SHARE, held to the commit: a product a concurrent delete removes is either gone here (the
  // 400 below) or stays until the memberships are written. Without it the insert met the delete's
  // commit as a foreign-key violation, a 500. (The lock a foreign key takes; ordinary product
  // updates do not wait for it.) Rows in id order, as every multi-product lock takes them.
  const { rows } = await q.query<{ id: string; num_id: number }>(
    `SELECT id, num_id FROM products WHERE store_id = $1 AND (id = ANY($2::uuid[]) OR num_id = ANY($3::bigint[]))
      ORDER BY id FOR KEY SHARE`,
    [collection.store_id, uuids, nums],
  );
  const byRef = new Map<string, string>();
  for (const r of rows) {
    byRef.set(r.id, r.id);
    byRef.set(String(r.num_id), r.id);
  }
  const ordered: string[] = [];
  refs.forEach((ref) => {
    const id = byRef.get(ref.toLowerCase()) ?? byRef.get(ref);
    if (!id) throw badRequest(`productIds: ${ref} is not a product of this store`);
    if (!ordered.includes(id)) ordered.push(id);
  });
  await q.query(
    `INSERT INTO collection_products (collection_id, product_id, position, created_at)
     SELECT $1, t.product_id, (SELECT COALESCE(max(position), 0) FROM collection_products WHERE collection_id = $1) + t.n::int, $3
       FROM unnest($2::uuid[]) WITH ORDINALITY AS t(product_id, n)
     ON CONFLICT (collection_id, product_id) DO NOTHING`,
    [collection.id, ordered, now],
  );
  return (await findCollection(q, collection.id))!;
}
