// Variant rows (C14.2: one row, two ids: the integer `id` of the App API product object and the UUID
// `varientId` of the merchant record) and the merchant record of app-api.md Variant.
import { Type } from 'typebox';
import type { Queryable } from '../db/db.js';
import { nullable, Timestamp } from '../http/schemas.js';
import { uuidv7 } from '../ids.js';

export interface VariantRow {
  id: string;
  num_id: number;
  product_id: string;
  store_id: string;
  name: string;
  value: string;
  price_minor: number;
  discount_price_minor: number | null;
  stock: number;
  stock_status: string;
  sku: string | null;
  weight: string | number | null;
  weight_unit: string | null;
  main_image_url: string | null;
  position: number;
  created_at: Date;
  updated_at: Date;
}

export const WEIGHT_UNITS = ['g', 'kg', 'lb', 'oz'] as const;

/** Fields a merchant may set on a variant; absent ones are left as they are. */
export interface VariantFields {
  name?: string;
  value?: string;
  price_minor?: number;
  discount_price_minor?: number | null;
  stock?: number;
  stock_status?: string;
  sku?: string | null;
  weight?: number | null;
  weight_unit?: string | null;
  main_image_url?: string | null;
}

const COLUMNS: (keyof VariantFields)[] = [
  'name', 'value', 'price_minor', 'discount_price_minor', 'stock', 'stock_status', 'sku', 'weight', 'weight_unit', 'main_image_url',
];

/** Money of the merchant record is a number in major units (app-api.md Variant: `price` number). */
const major = (minor: number) => minor / 100;

export function variantRecord(v: VariantRow) {
  return {
    varientId: v.id,
    productId: v.product_id,
    name: v.name,
    value: v.value,
    price: major(v.price_minor),
    discountPrice: v.discount_price_minor === null ? null : major(v.discount_price_minor),
    stock: v.stock,
    stockStatus: v.stock_status,
    skuId: v.sku,
    weight: v.weight === null ? null : Number(v.weight),
    weightUnit: v.weight_unit,
    mainImageUrl: v.main_image_url,
    updatedAt: v.updated_at.toISOString(),
  };
}

/** The merchant variant record (app-api.md Variant), as `variantRecord` writes it. */
export const VariantRecordSchema = Type.Object({
  varientId: Type.String({ description: 'the variant UUID' }),
  productId: Type.String({ description: 'the product UUID' }),
  name: Type.String(),
  value: Type.String(),
  price: Type.Number({ description: 'the list price in major units, e.g. 25.5' }),
  discountPrice: nullable(Type.Number({ description: 'the lower price it sells at, in major units' })),
  stock: Type.Integer(),
  stockStatus: Type.String({ description: 'e.g. IN_STOCK, OUT_OF_STOCK' }),
  skuId: nullable(Type.String()),
  weight: nullable(Type.Number()),
  weightUnit: nullable(Type.String({ description: 'g, kg, lb or oz' })),
  mainImageUrl: nullable(Type.String()),
  updatedAt: Timestamp(),
});

/** By UUID or numeric id (C14.2), in any store (the caller checks the store). */
export async function findVariantAnyStore(q: Queryable, id: string, opts: { lock?: boolean } = {}): Promise<VariantRow | null> {
  const byNum = /^\d{1,15}$/.test(id);
  const { rows } = await q.query<VariantRow>(
    `SELECT * FROM variants WHERE ${byNum ? 'num_id = $1::bigint' : 'id = $1::uuid'}${opts.lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0] ?? null;
}

export async function variantsOfProduct(q: Queryable, productId: string): Promise<VariantRow[]> {
  const { rows } = await q.query<VariantRow>('SELECT * FROM variants WHERE product_id = $1 ORDER BY position, num_id FOR UPDATE', [productId]);
  return rows;
}

export async function insertVariant(q: Queryable, storeId: string, productId: string, position: number, f: VariantFields & { price_minor: number }, now: Date): Promise<VariantRow> {
  const stock = f.stock ?? 0;
  const { rows } = await q.query<VariantRow>(
    `INSERT INTO variants (id, product_id, store_id, name, value, price_minor, discount_price_minor, stock, stock_status, sku,
                           weight, weight_unit, main_image_url, position, created_at, updated_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$15) RETURNING *`,
    [
      uuidv7(now.getTime()), productId, storeId, f.name ?? '', f.value ?? '', f.price_minor, f.discount_price_minor ?? null, stock,
      // A new variant's status follows its stock unless one is given.
      f.stock_status ?? (stock > 0 ? 'IN_STOCK' : 'OUT_OF_STOCK'), f.sku ?? null, f.weight ?? null, f.weight_unit ?? null,
      f.main_image_url ?? null, position, now,
    ],
  );
  return rows[0];
}

export async function updateVariant(q: Queryable, id: string, f: VariantFields, now: Date): Promise<VariantRow> {
  const sets: string[] = [];
  const params: unknown[] = [];
  for (const column of COLUMNS) {
    if (f[column] === undefined) continue;
    params.push(f[column]);
    sets.push(`${column} = $${params.length}`);
  }
  params.push(now, id);
  const { rows } = await q.query<VariantRow>(
    `UPDATE variants SET ${[...sets, `updated_at = $${params.length - 1}`].join(', ')} WHERE id = $${params.length} RETURNING *`,
    params,
  );
  return rows[0];
}
