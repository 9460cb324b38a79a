// The product object of the App API (app-api.md Product; C14.1), built from one row that carries
// its variants and images as JSON (see products.repo.ts: one round trip per list page).
import { Type } from 'typebox';
import { formatMinor } from '../money.js';
import { Money, nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { PRODUCT_STATUSES } from './products.repo.js';

export interface ProductRow {
  id: string;
  num_id: number;
  store_id: string;
  title: string;
  handle: string;
  body_html: string;
  vendor: string;
  product_type: string;
  published_scope: string;
  status: (typeof PRODUCT_STATUSES)[number];
  tags: string[];
  price_minor: number | null;
  compare_at_price_minor: number | null;
  inventory_quantity: number;
  sku: string | null;
  /** Whether the product ships (C15.1): copied to checkout and order lines. */
  requires_shipping: boolean;
  created_at: Date;
  updated_at: Date;
  variants: VariantJson[];
  images: { num_id: number; src: string; position: number }[];
}

export interface VariantJson {
  num_id: number;
  name: string;
  value: string;
  price_minor: number;
  discount_price_minor: number | null;
  sku: string | null;
  stock: number;
  stock_status: string;
}

/**
 * A merchant variant has a list `price` and an optional lower `discountPrice` it sells at. On the
 * App API the selling price is `price` and the list price `compare_at_price` (docs/decisions.md).
 */
export function variantPrices(v: Pick<VariantJson, 'price_minor' | 'discount_price_minor'>) {
  const discounted = v.discount_price_minor !== null && v.discount_price_minor < v.price_minor;
  return {
    price: formatMinor(discounted ? v.discount_price_minor : v.price_minor)!,
    compare_at_price: discounted ? formatMinor(v.price_minor) : null,
  };
}

export function productView(p: ProductRow) {
  return {
    id: p.num_id,
    product_id: p.id,
    title: p.title,
    handle: p.handle,
    body_html: p.body_html,
    vendor: p.vendor,
    product_type: p.product_type,
    published_scope: p.published_scope,
    status: p.status,
    tags: p.tags,
    price: formatMinor(p.price_minor),
    compare_at_price: formatMinor(p.compare_at_price_minor),
    inventory_quantity: p.inventory_quantity,
    variants: p.variants.map((v) => ({
      id: v.num_id,
      product_id: p.num_id,
      title: [v.name, v.value].filter(Boolean).join(' / ') || 'Default',
      ...variantPrices(v),
      sku: v.sku,
      inventory_quantity: v.stock,
      available: v.stock > 0,
    })),
    images: p.images.map((i) => ({ id: i.num_id, product_id: p.num_id, src: i.src, position: i.position })),
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
  };
}

const ProductVariantSchema = Type.Object({
  id: Type.Integer({ description: 'numeric variant id' }),
  product_id: Type.Integer(),
  title: Type.String({ description: '`name / value`, or `Default`' }),
  price: Money('the selling price'),
  compare_at_price: nullable(Money('the list price when the variant sells at a discount')),
  sku: nullable(Type.String()),
  inventory_quantity: Type.Integer(),
  available: Type.Boolean(),
});

/** The App API product (app-api.md Product; C14.1), as `productView` writes it. */
export const ProductSchema = Type.Object({
  id: Type.Integer({ description: 'numeric product id' }),
  product_id: Type.String({ description: 'the product UUID' }),
  title: Type.String(),
  handle: Type.String(),
  body_html: Type.String(),
  vendor: Type.String(),
  product_type: Type.String(),
  published_scope: Type.String(),
  status: StringEnum(PRODUCT_STATUSES),
  tags: Type.Array(Type.String()),
  price: nullable(Money()),
  compare_at_price: nullable(Money()),
  inventory_quantity: Type.Integer(),
  variants: Type.Array(ProductVariantSchema),
  images: Type.Array(Type.Object({ id: Type.Integer(), product_id: Type.Integer(), src: Type.String(), position: Type.Integer() })),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
