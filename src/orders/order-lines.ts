// Line items of an order: resolved against the store's catalog (product, variant, selling price)
// and written; shared by order creation and by the replacement `products` of an update.
import type { Queryable } from '../db/db.js';
import { uuidv7 } from '../ids.js';
import { fieldError } from '../content/fields.js';
import { findProduct } from '../catalog/products.repo.js';
import { findVariantAnyStore } from '../catalog/variants.repo.js';
import type { LineInput } from './order-input.js';
import type { StockLine } from './stock.js';
import { insertLineItem } from './orders.repo.js';
import { fitsMinorUnits, minorDigits } from '../currencies.js';
import { formatMinor } from '../money.js';

export interface ResolvedLine {
  input: LineInput;
  productId: string | null;
  variantId: string | null;
  productNumId: number | null;
  variantNumId: number | null;
  title: string;
  variantTitle: string | null;
  sku: string | null;
  unitMinor: number;
  /** The product's `requires_shipping` (C15.1: copied to its lines); a custom line ships. */
  requiresShipping: boolean;
}

const variantTitle = (v: { name: string; value: string }) => [v.name, v.value].filter(Boolean).join(' / ') || 'Default';
/** The selling price of a variant (product-view.ts: the lower discount price when there is one). */
const sellingPrice = (v: { price_minor: number; discount_price_minor: number | null }) =>
  v.discount_price_minor !== null && v.discount_price_minor < v.price_minor ? v.discount_price_minor : v.price_minor;

/**
 * Each line's product and variant in the store, and its price (a given price wins, C7.1 `products`
 * pricing). Every unit price must be a whole step of the order's `currency`, the catalog's too:
 * catalog prices are in the store's currency and are not converted (docs/decisions.md), so a
 * 12.50 product in an order in JPY made an order of 13.50 yen, which ISO 4217 cannot express
 * (found in review). Amounts a body brings are refused earlier, with their own words
 * (`assertFitsCurrency`).
 */
export async function resolveLines(tx: Queryable, storeId: string, inputs: LineInput[], currency: string): Promise<ResolvedLine[]> {
  const out = await resolveEach(tx, storeId, inputs);
  for (const l of out) {
    if (!fitsMinorUnits(l.unitMinor, currency)) {
      throw fieldError(`${l.input.label}.price`, `the catalog price ${formatMinor(l.unitMinor)} is not a whole number of ${currency} minor units (${minorDigits(currency)} decimals)`);
    }
  }
  return out;
}

async function resolveEach(tx: Queryable, storeId: string, inputs: LineInput[]): Promise<ResolvedLine[]> {
  const products = new Map<string, Awaited<ReturnType<typeof findProduct>>>();
  const out: ResolvedLine[] = [];
  for (const input of inputs) {
    if (input.productRef === null) {
      out.push({ input, productId: null, variantId: null, productNumId: null, variantNumId: null, title: input.title!, variantTitle: null, sku: null, unitMinor: input.priceMinor!, requiresShipping: true });
      continue;
    }
    const productField = input.label.startsWith('products') ? `${input.label}.productId` : `${input.label}.product_id`;
    const variantField = input.label.startsWith('products') ? `${input.label}.varientId` : `${input.label}.variant_id`;
    if (!products.has(input.productRef)) products.set(input.productRef, await findProduct(tx, storeId, input.productRef));
    const product = products.get(input.productRef);
    if (!product) throw fieldError(productField, 'is not a product of this store');
    if (input.variantRef !== null) {
      const v = await findVariantAnyStore(tx, input.variantRef);
      if (!v || v.product_id !== product.id) throw fieldError(variantField, 'is not a variant of this product');
      out.push({
        input, productId: product.id, variantId: v.id, productNumId: product.num_id, variantNumId: v.num_id, title: product.title,
        variantTitle: variantTitle(v), sku: v.sku ?? product.sku, unitMinor: input.priceMinor ?? sellingPrice(v), requiresShipping: product.requires_shipping,
      });
      continue;
    }
    if (product.variants.length > 0) throw fieldError(variantField, "can't be blank: the product has variants");
    const unit = input.priceMinor ?? product.price_minor;
    if (unit === null) throw fieldError(productField, 'names a product without a price');
    out.push({
      input, productId: product.id, variantId: null, productNumId: product.num_id, variantNumId: null, title: product.title,
      variantTitle: null, sku: product.sku, unitMinor: unit, requiresShipping: product.requires_shipping,
    });
  }
  return out;
}

export const stockLines = (lines: ResolvedLine[]): StockLine[] =>
  lines.map((l) => ({ productId: l.productId, variantId: l.variantId, quantity: l.input.quantity, label: l.input.label }));

export async function insertLines(tx: Queryable, orderId: string, lines: ResolvedLine[], discounts: number[], now: Date): Promise<void> {
  for (const [i, l] of lines.entries()) {
    await insertLineItem(tx, {
      id: uuidv7(now.getTime()),
      order_id: orderId,
      product_id: l.productId,
      variant_id: l.variantId,
      product_num_id: l.productNumId,
      variant_num_id: l.variantNumId,
      title: l.title,
      variant_title: l.variantTitle,
      sku: l.sku,
      quantity: l.input.quantity,
      price_minor: l.unitMinor,
      total_discount_minor: discounts[i],
      properties: l.input.properties,
      requires_shipping: l.requiresShipping,
      stock_deducted: l.productId !== null,
      position: i + 1,
    });
  }
}
