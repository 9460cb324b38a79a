// The rules of product and variant changes. Each function runs inside the caller's transaction and
// writes the change's events there too (C8.1): a rolled-back change leaves no event behind.
import type { Queryable } from '../db/db.js';
import { badRequest } from '../http/errors.js';
import { uuidv7 } from '../ids.js';
import { emit } from '../outbox/emit.js';
import { slugify } from '../slug.js';
import { productView, type ProductRow } from './product-view.js';
import { freeHandle, handleTaken, lockStoreHandles, productById, type LockedProduct } from './products.repo.js';
import { MAX_VARIANTS, type NewVariant, type ProductDraft, type ProductPatch, type VariantChange } from './products.input.js';
import { releaseUploadNames, uploadNamesDropped, uploadNamesIn } from './upload-references.js';
import { insertVariant, updateVariant, variantsOfProduct, type VariantFields, type VariantRow } from './variants.repo.js';

const taken = () => badRequest('handle has already been taken', { handle: ['has already been taken'] });

/**
 * `inventory_levels/update` body (app-api.md leaves it open; docs/decisions.md): the stock level that
 * changed, named by the numeric ids of the product object, `variant_id` null for product-level stock.
 */
export function inventoryLevelPayload(level: { productNumId: number; variantNumId: number | null; sku: string | null; available: number; updatedAt: Date }) {
  return {
    product_id: level.productNumId,
    variant_id: level.variantNumId,
    sku: level.sku,
    available: level.available,
    updated_at: level.updatedAt.toISOString(),
  };
}

/** Product-level price and compare-at price mirrored from a variant (C14.1; the view's mapping). */
function mirror(v: Pick<NewVariant, 'price_minor' | 'discount_price_minor'>) {
  const discounted = v.discount_price_minor != null && v.discount_price_minor < v.price_minor;
  return { price: discounted ? v.discount_price_minor! : v.price_minor, compare: discounted ? v.price_minor : null };
}

/**
 * What tells two variants of a product apart for a buyer: the title the product object shows
 * (`name / value`), in any case and with the spaces around each part ignored.
 */
function optionKey(v: { name?: string; value?: string }): string {
  return [v.name ?? '', v.value ?? ''].map((s) => s.trim().normalize('NFC').toLowerCase()).filter(Boolean).join(' / ');
}

const optionTitle = (v: { name?: string; value?: string }) => [v.name?.trim(), v.value?.trim()].filter(Boolean).join(' / ') || 'Default';

/**
 * A product's variant after a change: `label` names the request entry that gave it a new pair
 * (`''` for a request about one variant; null when its pair is unchanged).
 */
interface OptionPair {
  name?: string;
  value?: string;
  label: string | null;
}

/**
 * Two variants of one product never share a name and value (docs/decisions.md Catalog): a buyer,
 * an order line's `variant_title` and the product object could not tell them apart. Only a new or
 * changed pair is judged, so variants that shared one before the rule can still be changed in other
 * ways. The caller holds the product's lock, so concurrent writers of one product see each other's
 * pairs. Of two entries that clash with each other, the later one is named.
 */
function assertDistinctOptions(pairs: OptionPair[]): void {
  const groups = new Map<string, OptionPair[]>();
  for (const p of pairs) {
    const key = optionKey(p);
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  for (const group of groups.values()) {
    const changed = group.filter((p) => p.label !== null).at(-1);
    if (group.length < 2 || !changed) continue;
    const message = `the variant '${optionTitle(changed)}' already exists`;
    if (!changed.label) throw badRequest(`The variant '${optionTitle(changed)}' already exists`, { value: [message] });
    throw badRequest(`${changed.label}: ${message}`, { [changed.label]: [message] });
  }
}

async function replaceImages(tx: Queryable, productId: string, srcs: string[]): Promise<void> {
  await tx.query('DELETE FROM product_images WHERE product_id = $1', [productId]);
  if (srcs.length === 0) return;
  await tx.query(
    `INSERT INTO product_images (product_id, src, position)
     SELECT $1, src, pos::int FROM unnest($2::text[]) WITH ORDINALITY AS t(src, pos)`,
    [productId, srcs],
  );
}

/**
 * C6.1 / C7.1 create. Without variants the product-level price, compare-at price and stock are the
 * body's; with variants they are set from the first one (C14.1). A handle given must be free in the
 * store; a default one (from the title) takes the first free `slug-N`; concurrent creates and handle
 * changes of one store take turns (lockStoreHandles), so two of them never share a handle.
 */
export async function createProduct(tx: Queryable, storeId: string, draft: ProductDraft, now: Date): Promise<ProductRow> {
  assertDistinctOptions(draft.variants.map((v, i) => ({ name: v.name, value: v.value, label: `variants[${i}]` })));
  await lockStoreHandles(tx, storeId); // held to the commit: the handle chosen below stays free until it is inserted
  let handle: string;
  if (draft.handle) {
    if (await handleTaken(tx, storeId, draft.handle)) throw taken();
    handle = draft.handle;
  } else {
    handle = await freeHandle(tx, storeId, slugify(draft.title) || 'product');
  }
  const first = draft.variants[0];
  const level = first
    ? { ...mirror(first), qty: first.stock ?? 0, sku: draft.sku ?? first.sku ?? null }
    : { price: draft.price_minor ?? null, compare: draft.compare_at_price_minor ?? null, qty: draft.inventory_quantity ?? 0, sku: draft.sku ?? null };
  const category = draft.category ?? null;
  const id = uuidv7(now.getTime());
  await tx.query(
    `INSERT INTO products (id, store_id, title, handle, body_html, category, vendor, product_type, status, tags,
                           price_minor, compare_at_price_minor, inventory_quantity, sku, requires_shipping, created_at, updated_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$7,$8,$9,$10,$11,$12,$13,$15,$14,$14)`,
    [id, storeId, draft.title, handle, draft.body_html ?? '', category, category ?? '', draft.status ?? 'active',
      JSON.stringify(draft.tags ?? []), level.price, level.compare, level.qty, level.sku, now, draft.requires_shipping ?? true],
  );
  for (const [i, v] of draft.variants.entries()) await insertVariant(tx, storeId, id, i + 1, v, now);
  if (draft.images?.length) await replaceImages(tx, id, draft.images);
  const row = await productById(tx, id);
  await emit(tx, { storeId, topic: 'products/create', payload: productView(row), now });
  return row;
}

/** The variant of the product a change names by its UUID or numeric id. */
const variantNamed = (variants: VariantRow[], ref: string) => variants.find((v) => v.id === ref || String(v.num_id) === ref);

/** The product's variants as `variantChanges` leave them (unknown refs are refused later, when applied). */
function pairsAfter(existing: VariantRow[], variantChanges: VariantChange[]): OptionPair[] {
  const pairs = new Map<string, OptionPair>(existing.map((v) => [v.id, { name: v.name, value: v.value, label: null }]));
  const added: OptionPair[] = [];
  for (const change of variantChanges) {
    const { name, value } = change.fields;
    if (change.ref === null) {
      added.push({ name, value, label: change.label });
      continue;
    }
    const current = variantNamed(existing, change.ref);
    if (!current || (name === undefined && value === undefined)) continue;
    const pair = pairs.get(current.id)!;
    const next = { name: name ?? pair.name, value: value ?? pair.value };
    // Judged against the variant's pair before the request: a variant may be named by its own pair.
    pairs.set(current.id, { ...next, label: optionKey(next) === optionKey(current) ? null : change.label });
  }
  return [...pairs.values(), ...added];
}

interface StockChange {
  variant: VariantRow | null;
  available: number;
}

/**
 * An update of a locked product: its columns, then (merchant only) images and variants, then the
 * events: `products/update` always, `inventory_levels/update` once per stock level whose value
 * changed. `category` sets `vendor` and `product_type`, which are never set directly.
 */
export async function updateProduct(tx: Queryable, product: LockedProduct, patch: ProductPatch, variantChanges: VariantChange[], now: Date): Promise<ProductRow> {
  if (patch.handle !== undefined) {
    await lockStoreHandles(tx, product.store_id);
    if (await handleTaken(tx, product.store_id, patch.handle, product.id)) throw taken();
  }
  const sets: string[] = [];
  const params: unknown[] = [];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (patch.title !== undefined) set('title', patch.title);
  if (patch.body_html !== undefined) set('body_html', patch.body_html);
  if (patch.handle !== undefined) set('handle', patch.handle);
  if (patch.status !== undefined) set('status', patch.status);
  if (patch.tags !== undefined) set('tags', JSON.stringify(patch.tags));
  if (patch.price_minor !== undefined) set('price_minor', patch.price_minor);
  if (patch.compare_at_price_minor !== undefined) set('compare_at_price_minor', patch.compare_at_price_minor);
  if (patch.inventory_quantity !== undefined) set('inventory_quantity', patch.inventory_quantity);
  if (patch.sku !== undefined) set('sku', patch.sku);
  if (patch.requires_shipping !== undefined) set('requires_shipping', patch.requires_shipping);
  if (patch.category !== undefined) {
    set('category', patch.category);
    set('vendor', patch.category ?? '');
    set('product_type', patch.category ?? '');
  }
  set('updated_at', now);
  params.push(product.id);
  const where = `$${params.length}`;
  if (patch.body_html === undefined) {
    await tx.query(`UPDATE products SET ${sets.join(', ')} WHERE id = ${where}`, params);
  } else {
    // The description may embed the store's uploads: the names the new one no longer has are
    // released, read from the row as it was in the same statement (the product is locked).
    const { rows: [updated] } = await tx.query<{ dropped: string[] }>(
      `UPDATE products p SET ${sets.join(', ')} FROM (SELECT body_html FROM products WHERE id = ${where}) AS prior
        WHERE p.id = ${where} RETURNING ${uploadNamesDropped('prior.body_html', 'p.body_html')} AS dropped`,
      params,
    );
    await releaseUploadNames(tx, product.store_id, updated?.dropped ?? [], now);
  }

  if (patch.images !== undefined) await replaceImages(tx, product.id, patch.images);

  const stock: StockChange[] = [];
  if (patch.inventory_quantity !== undefined && patch.inventory_quantity !== product.inventory_quantity) {
    stock.push({ variant: null, available: patch.inventory_quantity });
  }
  if (variantChanges.length) {
    const existing = await variantsOfProduct(tx, product.id);
    // The create's cap holds for the product, not per request: without this, updates of 100 new
    // variants each grew a product without bound (and with it every list page that shows it).
    // The product is locked, so concurrent additions count each other.
    const added = variantChanges.filter((c) => c.ref === null).length;
    if (existing.length + added > MAX_VARIANTS) {
      const message = `would have ${existing.length + added} variants; a product has at most ${MAX_VARIANTS}`;
      throw badRequest(`variants ${message}`, { variants: [message] });
    }
    assertDistinctOptions(pairsAfter(existing, variantChanges));
    let position = existing.reduce((max, v) => Math.max(max, v.position), 0);
    const changed = new Map<string, { before: number; after: VariantRow }>();
    for (const change of variantChanges) {
      if (change.ref === null) {
        await insertVariant(tx, product.store_id, product.id, ++position, change.fields as VariantFields & { price_minor: number }, now);
        continue;
      }
      const current = variantNamed(existing, change.ref);
      if (!current) throw badRequest(`${change.label}.varientId is not a variant of this product`, { [`${change.label}.varientId`]: ['is not a variant of this product'] });
      changed.set(current.id, { before: changed.get(current.id)?.before ?? current.stock, after: await updateVariant(tx, current.id, change.fields, now) });
    }
    // One event per variant whose level the request moved, with the level it left: a variant named
    // twice (stock 3, then 5) is one change from where it began, not an event saying 3.
    for (const { before, after } of changed.values()) if (after.stock !== before) stock.push({ variant: after, available: after.stock });
  }

  const row = await productById(tx, product.id);
  await emit(tx, { storeId: product.store_id, topic: 'products/update', payload: productView(row), now });
  for (const s of stock) {
    await emit(tx, {
      storeId: product.store_id,
      topic: 'inventory_levels/update',
      payload: inventoryLevelPayload({ productNumId: row.num_id, variantNumId: s.variant?.num_id ?? null, sku: s.variant ? s.variant.sku : row.sku, available: s.available, updatedAt: now }),
      now,
    });
  }
  return row;
}

/**
 * Deletes a locked product with its variants, images, collection memberships and listings (cascades)
 * and the metafields it and its variants own; `products/delete` carries the product as it was. The
 * store's uploads any of those named are released for the `upload-purge` job.
 */
export async function deleteProduct(tx: Queryable, product: LockedProduct, now: Date): Promise<ProductRow> {
  const before = await productById(tx, product.id);
  // Its images, its variants' images, its description and its metafields' values may name the
  // store's uploads: they are released with them, here, so no route deleting a product can forget.
  const { rows: images } = await tx.query<{ names: string[] }>(
    `SELECT ${uploadNamesIn('src')} AS names FROM product_images WHERE product_id = $1
     UNION ALL SELECT ${uploadNamesIn('main_image_url')} FROM variants WHERE product_id = $1 AND main_image_url IS NOT NULL`,
    [product.id],
  );
  const { rows: metafields } = await tx.query<{ names: string[] }>(
    `DELETE FROM metafields WHERE store_id = $1 AND (
       (owner_type = 'product' AND owner_id = $2::text)
       OR (owner_type = 'variant' AND owner_id IN (SELECT id::text FROM variants WHERE product_id = $2::uuid)))
     RETURNING ${uploadNamesIn('value')} AS names`,
    [product.store_id, product.id],
  );
  const { rows: body } = await tx.query<{ names: string[] }>(`DELETE FROM products WHERE id = $1 RETURNING ${uploadNamesIn('body_html')} AS names`, [product.id]);
  await releaseUploadNames(tx, product.store_id, [...images, ...metafields, ...body].flatMap((r) => r.names), now);
  await emit(tx, { storeId: product.store_id, topic: 'products/delete', payload: productView(before), now });
  return before;
}

/**
 * Merchant variant update (C7.3): the variant row only, never the product-level values (C14.1). The
 * product object shows its variants, so the change is a `products/update`; a new stock level also
 * an `inventory_levels/update`.
 */
export async function updateVariantRecord(tx: Queryable, variant: VariantRow, fields: VariantFields, now: Date): Promise<VariantRow> {
  const next = { name: fields.name ?? variant.name, value: fields.value ?? variant.value };
  if (optionKey(next) !== optionKey(variant)) {
    // The caller holds the product's lock (variants.admin.ts), so its other variants stay as read.
    const siblings = (await variantsOfProduct(tx, variant.product_id)).filter((v) => v.id !== variant.id);
    assertDistinctOptions([...siblings.map((v) => ({ name: v.name, value: v.value, label: null })), { ...next, label: '' }]);
  }
  const updated = await updateVariant(tx, variant.id, fields, now);
  await tx.query('UPDATE products SET updated_at = $2 WHERE id = $1', [variant.product_id, now]);
  const row = await productById(tx, variant.product_id);
  await emit(tx, { storeId: variant.store_id, topic: 'products/update', payload: productView(row), now });
  if (updated.stock !== variant.stock) {
    await emit(tx, {
      storeId: variant.store_id,
      topic: 'inventory_levels/update',
      payload: inventoryLevelPayload({ productNumId: row.num_id, variantNumId: updated.num_id, sku: updated.sku, available: updated.stock, updatedAt: now }),
      now,
    });
  }
  return updated;
}
