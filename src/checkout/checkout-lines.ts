// A checkout's lines priced from the catalog (C15.1): title, variant title, SKU, the selling
// price per unit, the weight per unit in grams (C15.2, C15.3) and whether the product ships. Lines
// are kept as asked (product, variant, quantity) and priced whenever the checkout is read, so a
// checkout never shows a price its completion would not charge.
import type { Queryable } from '../db/db.js';
import { fieldError } from '../content/fields.js';
import { fitsMinorUnits, minorDigits } from '../currencies.js';
import { formatMinor } from '../money.js';
import { gramsPerUnit } from './weights.js';
import { catalogLine, type AskedLine, type CatalogLine } from './checkouts.repo.js';

export interface PricedLine {
  id: string;
  productId: string;
  variantId: string | null;
  productNumId: number;
  variantNumId: number | null;
  title: string;
  variantTitle: string | null;
  sku: string | null;
  quantity: number;
  unitMinor: number;
  /** Per unit, whole grams. */
  grams: number;
  /** The variant's weight and unit as stored (C15.2 sums them exactly); null without a variant weight. */
  weight: string | null;
  weightUnit: string | null;
  requiresShipping: boolean;
}

/** A problem the buyer must fix before completing (C15.1 `validation_errors[]`). */
export interface ValidationProblem {
  message: string;
  target: string;
}

const variantTitleOf = (name: string | null, value: string | null) => [name, value].filter(Boolean).join(' / ') || 'Default';

/** Why a catalog line cannot be sold now, in the words of the field the buyer sent; null when it can. */
function unavailable(found: CatalogLine | null, asked: Pick<AskedLine, 'variant_id'>): { field: 'product_id' | 'variant_id'; problem: string } | null {
  if (!found) return { field: 'product_id', problem: 'is not a product of this store' };
  if (found.status !== 'active') return { field: 'product_id', problem: 'is not available' };
  if (asked.variant_id !== null && found.variant_id === null) return { field: 'variant_id', problem: 'is not a variant of this product' };
  if (asked.variant_id === null && found.variant_count > 0) return { field: 'variant_id', problem: "can't be blank: the product has variants" };
  if (asked.variant_id === null && found.product_price_minor === null) return { field: 'product_id', problem: 'has no price' };
  return null;
}

function priced(found: CatalogLine, asked: AskedLine): PricedLine {
  const hasVariant = found.variant_id !== null;
  const list = found.variant_price_minor;
  const discounted = found.variant_discount_price_minor;
  const unitMinor = hasVariant ? (discounted !== null && discounted < list! ? discounted : list!) : found.product_price_minor!;
  return {
    id: asked.id,
    productId: found.product_id,
    variantId: found.variant_id,
    productNumId: Number(found.product_num_id),
    variantNumId: found.variant_num_id === null ? null : Number(found.variant_num_id),
    title: found.title,
    variantTitle: hasVariant ? variantTitleOf(found.variant_name, found.variant_value) : null,
    sku: (hasVariant ? found.variant_sku : null) ?? found.product_sku,
    quantity: asked.quantity,
    unitMinor: Number(unitMinor),
    grams: gramsPerUnit(found.weight, found.weight_unit),
    weight: found.weight,
    weightUnit: found.weight_unit,
    requiresShipping: found.requires_shipping,
  };
}

/**
 * The lines the buyer sends (create or change): each must name an active product of the store
 * (and its variant when it has variants), else a 400 naming the line's field. Returned with the
 * product and variant as UUIDs, whatever form the buyer used.
 */
export async function checkAskedLines(q: Queryable, storeId: string, asked: AskedLine[]): Promise<AskedLine[]> {
  const out: AskedLine[] = [];
  for (const [i, sent] of asked.entries()) {
    const found = await catalogLine(q, storeId, sent.product_id, sent.variant_id);
    // The checkout shows a product without variants with `variant_id` = the product's own id (as
    // orders do, checkout-view.ts): sent back as it was shown (a storefront changing a quantity), it
    // names the product itself, not a variant.
    const line = found && found.variant_count === 0 && sent.variant_id !== null && (sent.variant_id === found.product_id || sent.variant_id === String(found.product_num_id))
      ? { ...sent, variant_id: null }
      : sent;
    const problem = unavailable(found, line);
    if (problem) throw fieldError(`line_items[${i}].${problem.field}`, problem.problem);
    out.push({ ...line, product_id: found!.product_id, variant_id: found!.variant_id });
  }
  return out;
}

/**
 * The stored lines priced now. A line whose product was since archived or deleted is left out and
 * reported as a validation problem, so the buyer sees it and completion waits for a fix.
 */
export async function priceLines(q: Queryable, storeId: string, asked: AskedLine[]): Promise<{ lines: PricedLine[]; problems: ValidationProblem[] }> {
  const found: (CatalogLine | null)[] = [];
  for (const line of asked) found.push(await catalogLine(q, storeId, line.product_id, line.variant_id));
  return priceFoundLines(asked, found);
}

/** `priceLines` on catalog facts already read (`found[i]` for `asked[i]`, null when the product is gone). */
export function priceFoundLines(asked: AskedLine[], found: (CatalogLine | null)[]): { lines: PricedLine[]; problems: ValidationProblem[] } {
  const lines: PricedLine[] = [];
  const problems: ValidationProblem[] = [];
  for (const [i, line] of asked.entries()) {
    const f = found[i] ?? null;
    // Named by the line's id, as a validation function names a line (C11.3 `target`).
    if (unavailable(f, line)) problems.push({ message: 'This item is no longer available', target: line.id });
    else lines.push(priced(f!, line));
  }
  return { lines, problems };
}

/**
 * A checkout's lines priced now in its `currency` (`catalog`: the lines' catalog facts when already
 * read, `findCheckoutForQuote`): `priceLines`, and a line whose unit price that currency cannot hold
 * is left out and reported too, like an unavailable one. Catalog prices are in the store's currency
 * and not converted, and the order refuses a unit price that is not a whole step of its currency
 * (order-lines.ts resolveLines: a 1000.50 product in a yen store). Priced as it was, the checkout
 * showed a total no order can hold, and its completion was that 400, nothing the buyer can fix;
 * as a problem of the line, the buyer sees it before completing, and completion is C15.1's 422.
 */
export async function priceCheckoutLines(q: Queryable, storeId: string, asked: AskedLine[], currency: string, catalog?: (CatalogLine | null)[]): Promise<{ lines: PricedLine[]; problems: ValidationProblem[] }> {
  const all = catalog ? priceFoundLines(asked, catalog) : await priceLines(q, storeId, asked);
  const lines: PricedLine[] = [];
  const problems = [...all.problems];
  for (const l of all.lines) {
    if (fitsMinorUnits(l.unitMinor, currency)) lines.push(l);
    else problems.push({ message: `This item cannot be bought in ${currency}: its price ${formatMinor(l.unitMinor)} is not a whole number of ${currency} minor units (${minorDigits(currency)} decimals)`, target: l.id });
  }
  return { lines, problems };
}
