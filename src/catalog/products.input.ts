// The bodies of product create and update, App API (C6.1, app-api.md PUT /products/{id}.json) and
// merchant admin (C7.1, C14.1). Invalid input is a 400; the errors body groups messages per field.
import { Type, type Static, type TSchema } from 'typebox';
import { slugify } from '../slug.js';
import { nullable, StringEnum } from '../http/schemas.js';
import { PRODUCT_STATUSES } from './products.repo.js';
import { WEIGHT_UNITS, type VariantFields } from './variants.repo.js';
import {
  amountSchema, count, countSchema, FieldErrors, has, httpUrlSchema, idText, isCatalogId, isHttpUrl, measure, measureSchema, money,
  requiredAmountSchema, str, tagList, tagsSchema, textSchema, unwrap, type Body,
} from './input.js';

export type ProductStatus = (typeof PRODUCT_STATUSES)[number];

/** Product-level columns either kind of request may set. */
export interface ProductPatch {
  title?: string;
  body_html?: string;
  handle?: string;
  status?: ProductStatus;
  tags?: string[];
  price_minor?: number | null;
  compare_at_price_minor?: number | null;
  inventory_quantity?: number;
  sku?: string | null;
  /** Merchant only: sets `vendor` and `product_type` (C7.1). */
  category?: string | null;
  /** Merchant only: replaces the images. */
  images?: string[];
  /** Whether the product ships (C15.1; default true): copied to checkout lines. */
  requires_shipping?: boolean;
}

export interface NewVariant extends VariantFields {
  price_minor: number;
}

/** A merchant update's variant entry: changes the named variant of the product, or adds one. */
export interface VariantChange {
  ref: string | null;
  fields: VariantFields;
  label: string;
}

export interface ProductDraft extends ProductPatch {
  title: string;
  variants: NewVariant[];
}

const TITLE_MAX = 255;
const BODY_MAX = 512 * 1024;

// The body schemas, field by field as the readers below read them (the readers keep what a schema
// cannot say: trimming, slugs, money to minor units, the first-variant rule, lookups).

/** The fields every product body shares (App API and merchant, create and update). */
export const productFieldSchemas = {
  body_html: Type.Optional(textSchema('HTML; null clears it', BODY_MAX)),
  handle: Type.Optional(textSchema('default: a slug of the title, made unique in the store', 255)),
  status: Type.Optional(StringEnum(PRODUCT_STATUSES, { description: 'default active', 'x-error': 'must be active, draft or archived' })),
  tags: Type.Optional(tagsSchema),
  requires_shipping: Type.Optional(Type.Boolean({ description: 'whether the product ships (default true); copied to checkout lines (C15.1)' })),
};

/** Product-level money, stock and SKU, set directly (App API create; merchant create and update). */
export const productLevelSchemas = {
  price: Type.Optional(amountSchema('the price', { nullable: true })),
  compare_at_price: Type.Optional(amountSchema('the list price', { nullable: true })),
  inventory_quantity: Type.Optional(countSchema('the stock')),
  sku: Type.Optional(textSchema('null clears it', 255)),
};

/**
 * A merchant variant's fields as `variantFields` reads them (app-api.md Variant): money and
 * measures as numbers or their decimal text. The multipart form sends the same fields as text.
 */
export const variantFieldSchemas = {
  name: Type.Optional(textSchema('the option name, e.g. Size', 255)),
  value: Type.Optional(textSchema('the option value, e.g. M', 255)),
  price: Type.Optional(requiredAmountSchema('the list price')),
  discountPrice: Type.Optional(amountSchema('the lower price the variant sells at', { nullable: true })),
  stock: Type.Optional(countSchema('the stock')),
  stockStatus: Type.Optional(Type.Unsafe<string | null>({
    type: ['string', 'null'], maxLength: 50, pattern: '^[A-Za-z_]+$',
    description: 'letters and _, stored upper-case, e.g. IN_STOCK (default: from the stock)',
    'x-error': { maxLength: 'is too long (maximum is 50 characters)', pattern: 'must be a status such as IN_STOCK' },
  })),
  skuId: Type.Optional(textSchema('the SKU; null or "" clears it', 255)),
  weight: Type.Optional(measureSchema('the weight')),
  weightUnit: Type.Optional(nullable(StringEnum([...WEIGHT_UNITS, ''], { description: 'g, kg, lb or oz; null or "" clears it', 'x-error': 'must be g, kg, lb or oz' }))),
  mainImageUrl: Type.Optional(httpUrlSchema('the image', { nullable: true })),
};

/** The merchant's `images`: replaces the product's images. */
const imagesSchema = Type.Unsafe<string[] | null>({
  type: ['array', 'null'], maxItems: 250, items: httpUrlSchema('an image'),
  description: 'at most 250 image URLs, in order; null or [] removes them',
  'x-error': { type: 'must be an array of at most 250 image URLs', maxItems: 'must be an array of at most 250 image URLs' },
});

/**
 * The most variants a product has: a create sends at most this many, and a merchant update may add
 * variants only while the product stays within it (updateProduct).
 */
export const MAX_VARIANTS = 100;

/** The merchant's `variants`: at most MAX_VARIANTS objects. */
function variantsSchema<T extends TSchema>(item: T, description: string) {
  return Type.Unsafe<Static<T>[] | null>({
    type: ['array', 'null'], maxItems: MAX_VARIANTS, items: { ...item, 'x-error': { type: 'must be an object' } }, description,
    'x-error': { type: `must be an array of at most ${MAX_VARIANTS} variants`, maxItems: `must be an array of at most ${MAX_VARIANTS} variants` },
  });
}

const variantEntry = Type.Object(variantFieldSchemas);
const variantChange = Type.Object({
  varientId: Type.Optional(Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'], description: 'the variant to change: its UUID or numeric id; without it the entry adds a variant (then `price` is required)' })),
  id: Type.Optional(Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'], description: 'alias of varientId' })),
  ...variantFieldSchemas,
});

/** The merchant-only fields of both merchant bodies. */
const merchantFields = {
  category: Type.Optional(textSchema('sets vendor and product_type; null or "" clears them', 255)),
  images: Type.Optional(imagesSchema),
  storeId: Type.Optional(Type.String({ description: 'platform operator only: the store to act for' })),
};

/** Merchant `POST /products`. */
export const adminCreateBody = Type.Object({
  title: textSchema('required', TITLE_MAX),
  ...productFieldSchemas,
  ...productLevelSchemas,
  ...merchantFields,
  variants: Type.Optional(variantsSchema(variantEntry, 'the variants, each with a `price`; the first one sets the product-level price, compare-at price and stock (C14.1)')),
}, { description: 'Flat, or wrapped as `{ product: { ... } }`; `vendor` and `product_type` come from `category`' });

/** Merchant `PUT /products/{id}`. */
export const adminUpdateBody = Type.Object({
  title: Type.Optional(textSchema('a new title', TITLE_MAX)),
  ...productFieldSchemas,
  ...productLevelSchemas,
  ...merchantFields,
  variants: Type.Optional(variantsSchema(variantChange, `an entry with \`varientId\` changes that variant of the product, one without adds a variant (400 when the product would have more than ${MAX_VARIANTS}); variants not named are kept`)),
}, { description: 'All optional. Flat, or wrapped as `{ product: { ... } }`; `vendor` and `product_type` come from `category`' });

function status(errors: FieldErrors, body: Body): ProductStatus | undefined {
  if (!has(body, 'status')) return undefined;
  const v = body.status;
  if (typeof v !== 'string' || !(PRODUCT_STATUSES as readonly string[]).includes(v)) {
    errors.add('status', 'must be active, draft or archived');
    return undefined;
  }
  return v as ProductStatus;
}

function handle(errors: FieldErrors, body: Body): string | undefined {
  const raw = str(errors, body, 'handle', { max: 255 });
  if (raw === undefined || raw === null) return undefined;
  const slug = slugify(raw);
  if (!slug) {
    errors.add('handle', 'must contain letters or digits');
    return undefined;
  }
  return slug;
}

/** The fields shared by create and update; `required` marks the create (title must be there). */
function common(errors: FieldErrors, body: Body, required: boolean): ProductPatch {
  const patch: ProductPatch = {};
  const title = str(errors, body, 'title', { required: required || has(body, 'title'), max: TITLE_MAX });
  if (typeof title === 'string') patch.title = title.trim();
  const bodyHtml = str(errors, body, 'body_html', { max: BODY_MAX, nullable: true });
  if (bodyHtml !== undefined) patch.body_html = bodyHtml ?? '';
  const h = handle(errors, body);
  if (h !== undefined) patch.handle = h;
  const s = status(errors, body);
  if (s !== undefined) patch.status = s;
  const tags = tagList(errors, body.tags);
  if (tags !== undefined) patch.tags = tags;
  if (has(body, 'requires_shipping')) {
    if (typeof body.requires_shipping === 'boolean') patch.requires_shipping = body.requires_shipping;
    else errors.add('requires_shipping', 'must be true or false');
  }
  return patch;
}

/** Product-level money and stock, given directly (C6.1 create; merchant update). */
function productLevel(errors: FieldErrors, body: Body, patch: ProductPatch): void {
  const price = money(errors, body.price, 'price', { nullable: true });
  if (price !== undefined) patch.price_minor = price;
  const compare = money(errors, body.compare_at_price, 'compare_at_price', { nullable: true });
  if (compare !== undefined) patch.compare_at_price_minor = compare;
  const qty = count(errors, body.inventory_quantity, 'inventory_quantity');
  if (qty !== undefined) patch.inventory_quantity = qty;
  const sku = str(errors, body, 'sku', { max: 255, nullable: true });
  if (sku !== undefined) patch.sku = sku;
}

function category(errors: FieldErrors, body: Body, patch: ProductPatch): void {
  const c = str(errors, body, 'category', { max: 255, nullable: true });
  if (c !== undefined) patch.category = c === null || c.trim() === '' ? null : c.trim();
}

function images(errors: FieldErrors, body: Body, patch: ProductPatch): void {
  if (!has(body, 'images')) return;
  const list = body.images === null ? [] : body.images;
  if (!Array.isArray(list) || list.length > 250) {
    errors.add('images', 'must be an array of at most 250 image URLs');
    return;
  }
  list.forEach((src, i) => {
    if (!isHttpUrl(src)) errors.add(`images[${i}]`, 'must be an http or https URL');
  });
  patch.images = list as string[];
}

/**
 * A merchant variant (app-api.md Variant, C14.1): money and measures as numbers (numeric strings
 * too, as multipart sends them); `discountPrice` may be null to clear it.
 */
export function variantFields(errors: FieldErrors, body: Body, prefix: string): VariantFields {
  const f: VariantFields = {};
  const label = (k: string) => (prefix ? `${prefix}.${k}` : k);
  for (const [key, column] of [['name', 'name'], ['value', 'value']] as const) {
    const v = str(errors, body, key, { max: 255, label: label(key) });
    if (typeof v === 'string') f[column] = v;
  }
  const price = money(errors, body.price, label('price'));
  if (typeof price === 'number') f.price_minor = price;
  const discount = money(errors, body.discountPrice, label('discountPrice'), { nullable: true });
  if (discount !== undefined) f.discount_price_minor = discount;
  const stock = count(errors, body.stock, label('stock'));
  if (stock !== undefined) f.stock = stock;
  const stockStatus = str(errors, body, 'stockStatus', { max: 50, label: label('stockStatus') });
  if (typeof stockStatus === 'string') {
    if (!/^[A-Za-z_]+$/.test(stockStatus)) errors.add(label('stockStatus'), 'must be a status such as IN_STOCK');
    else f.stock_status = stockStatus.toUpperCase();
  }
  const sku = str(errors, body, 'skuId', { max: 255, nullable: true, label: label('skuId') });
  if (sku !== undefined) f.sku = sku === '' ? null : sku;
  const weight = measure(errors, body.weight, label('weight'), { nullable: true });
  if (weight !== undefined) f.weight = weight;
  if (has(body, 'weightUnit')) {
    const unit = body.weightUnit;
    if (unit === null || unit === '') f.weight_unit = null;
    else if (typeof unit === 'string' && (WEIGHT_UNITS as readonly string[]).includes(unit)) f.weight_unit = unit;
    else errors.add(label('weightUnit'), 'must be g, kg, lb or oz');
  }
  if (has(body, 'mainImageUrl')) {
    const url = body.mainImageUrl;
    if (url === null || url === '') f.main_image_url = null;
    else if (isHttpUrl(url)) f.main_image_url = url;
    else errors.add(label('mainImageUrl'), 'must be an http or https URL');
  }
  return f;
}

function variantList(errors: FieldErrors, body: Body): Body[] | undefined {
  if (!has(body, 'variants')) return undefined;
  const list = body.variants === null ? [] : body.variants;
  if (!Array.isArray(list) || list.length > MAX_VARIANTS) {
    errors.add('variants', `must be an array of at most ${MAX_VARIANTS} variants`);
    return undefined;
  }
  const objects: Body[] = [];
  list.forEach((v, i) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) errors.add(`variants[${i}]`, 'must be an object');
    else objects.push(v as Body);
  });
  return objects.length === list.length ? objects : undefined;
}

/** `POST /api/v1/products.json` (C6.1). A product made here has no variant rows (C14.1). */
export function readApiCreate(raw: unknown): ProductDraft {
  const body = unwrap(raw, 'product');
  const errors = new FieldErrors();
  const patch = common(errors, body, true);
  productLevel(errors, body, patch);
  errors.check();
  return { ...patch, title: patch.title!, variants: [] };
}

/** Merchant `POST /products` (C7.1): the create fields plus `category`, `images` and `variants`. */
export function readAdminCreate(raw: unknown): ProductDraft {
  const body = unwrap(raw, 'product');
  const errors = new FieldErrors();
  const patch = common(errors, body, true);
  productLevel(errors, body, patch);
  category(errors, body, patch);
  images(errors, body, patch);
  const variants: NewVariant[] = [];
  (variantList(errors, body) ?? []).forEach((v, i) => {
    const f = variantFields(errors, v, `variants[${i}]`);
    if (f.price_minor === undefined && !has(v, 'price')) errors.add(`variants[${i}].price`, "can't be blank");
    if (f.price_minor !== undefined) variants.push(f as NewVariant);
  });
  errors.check();
  return { ...patch, title: patch.title!, variants };
}

/**
 * `PUT /api/v1/products/{id}.json`: `title`, `body_html`, `handle`, `status`, `tags` (replace), and
 * `variants`, of which only the first entry is read: its `price`, `compare_at_price` and
 * `inventory_quantity` become the product-level values (app-api.md; C14.1). Extra entries are not
 * even checked; `vendor`, `product_type` and anything else are ignored.
 */
export function readApiUpdate(raw: unknown): ProductPatch {
  const body = unwrap(raw, 'product');
  const errors = new FieldErrors();
  const patch = common(errors, body, false);
  if (has(body, 'variants')) {
    const list = body.variants;
    if (!Array.isArray(list)) errors.add('variants', 'must be an array');
    else if (list.length > 0) {
      const first = list[0];
      if (!first || typeof first !== 'object' || Array.isArray(first)) errors.add('variants[0]', 'must be an object');
      else {
        const v = first as Body;
        const price = money(errors, v.price, 'variants[0].price', { nullable: true });
        if (price !== undefined) patch.price_minor = price;
        const compare = money(errors, v.compare_at_price, 'variants[0].compare_at_price', { nullable: true });
        if (compare !== undefined) patch.compare_at_price_minor = compare;
        const qty = count(errors, v.inventory_quantity, 'variants[0].inventory_quantity');
        if (qty !== undefined) patch.inventory_quantity = qty;
      }
    }
  }
  errors.check();
  return patch;
}

/**
 * Merchant `PUT /products/{id}`: every create field optional. Product-level money and stock are set
 * directly (independent of the variant rows, C14.1); `images` replaces the images; each `variants`
 * entry with a `varientId` (UUID or numeric id) changes that variant of the product, one without
 * adds a variant. Variants not named are kept.
 */
export function readAdminUpdate(raw: unknown): { patch: ProductPatch; variants: VariantChange[] } {
  const body = unwrap(raw, 'product');
  const errors = new FieldErrors();
  const patch = common(errors, body, false);
  productLevel(errors, body, patch);
  category(errors, body, patch);
  images(errors, body, patch);
  const variants: VariantChange[] = [];
  (variantList(errors, body) ?? []).forEach((v, i) => {
    const label = `variants[${i}]`;
    const refRaw = v.varientId ?? v.id;
    // A UUID in any case names the variant (rows hold it in lower case; the matching is by text).
    // One that is no id at all (0, -5) is refused below, not read as no id (which adds a variant).
    const ref = refRaw === undefined || refRaw === null ? null : (idText(refRaw) ?? String(refRaw)).toLowerCase();
    if (ref !== null && !isCatalogId(ref)) errors.add(`${label}.varientId`, 'must be a variant UUID or numeric id');
    const fields = variantFields(errors, v, label);
    if (ref === null && fields.price_minor === undefined && !has(v, 'price')) errors.add(`${label}.price`, "can't be blank");
    variants.push({ ref, fields, label });
  });
  errors.check();
  return { patch, variants };
}
