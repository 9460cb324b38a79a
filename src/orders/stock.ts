// Stock moved by orders (C7.1, C7.2). A line item with a variant moves the variant's stock; one of a
// product without variants moves the product-level stock (C14.1: the two are independent). Custom
// line items (no product) move nothing. Rows are changed in a fixed order (by table, then id), so
// two orders touching the same products cannot deadlock each other. A variant's row is never
// written alone: its trigger (migration 0008) rewrites its product's cached variants, so a stock
// move that writes variants first locks their products, in id order (`lockProductsOf`), as every
// catalog edit does (a product before its variants); else an order and a product update with
// variants deadlocked, the order failing with a 500.
import type { Queryable } from '../db/db.js';
import { badRequest } from '../http/errors.js';
import { INT4_MAX } from '../db/sql.js';

export interface StockLine {
  productId: string | null;
  variantId: string | null;
  quantity: number;
  /** For messages: `line_items[2]`. */
  label: string;
}

interface Target {
  table: 'variants' | 'products';
  id: string;
  /** The product the row is or belongs to. */
  productId: string;
  quantity: number;
  labels: string[];
}

function targets(lines: StockLine[]): Target[] {
  const byKey = new Map<string, Target>();
  for (const l of lines) {
    if (!l.productId) continue;
    const t: Pick<Target, 'table' | 'id' | 'productId'> = l.variantId
      ? { table: 'variants', id: l.variantId, productId: l.productId }
      : { table: 'products', id: l.productId, productId: l.productId };
    const key = `${t.table}:${t.id}`;
    const found = byKey.get(key);
    if (found) {
      found.quantity += l.quantity;
      found.labels.push(l.label);
    } else byKey.set(key, { ...t, quantity: l.quantity, labels: [l.label] });
  }
  return [...byKey.values()].sort((a, b) => (a.table === b.table ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.table === 'products' ? -1 : 1));
}

/**
 * Stock columns are `integer`, and the merchant routes take stock up to INT4_MAX (src/db/sql.ts).
 * Giving stock back stops there: a restock after the merchant set a row at the top (C7.2) was an
 * integer overflow, a 500 that left the order uncancellable with `restock: true`.
 */
const MAX_STOCK = INT4_MAX;

const SQL = {
  variants: {
    lock: 'SELECT 1 FROM variants WHERE id = $1 FOR UPDATE',
    take: 'UPDATE variants SET stock = stock - $2 WHERE id = $1 AND stock >= $2 RETURNING stock',
    left: 'SELECT stock AS n FROM variants WHERE id = $1',
    give: `UPDATE variants SET stock = LEAST(stock::bigint + $2, ${MAX_STOCK}) WHERE id = $1`,
  },
  products: {
    lock: 'SELECT 1 FROM products WHERE id = $1 FOR UPDATE',
    take: 'UPDATE products SET inventory_quantity = inventory_quantity - $2 WHERE id = $1 AND inventory_quantity >= $2 RETURNING inventory_quantity',
    left: 'SELECT inventory_quantity AS n FROM products WHERE id = $1',
    give: `UPDATE products SET inventory_quantity = LEAST(inventory_quantity::bigint + $2, ${MAX_STOCK}) WHERE id = $1`,
  },
} as const;

/**
 * The products of `targets` locked in id order when a variant is among them (see the top: writing
 * a variant writes its product). Targets of products alone are locked by their own writes, already
 * in that order.
 */
async function lockProductsOf(tx: Queryable, targets: Target[]): Promise<void> {
  if (!targets.some((t) => t.table === 'variants')) return;
  const ids = [...new Set(targets.map((t) => t.productId))].sort();
  // Unnamed: a named statement on the embedded database runs as EXECUTE with literals (src/db/pglite.ts), which take no arrays.
  await tx.query('SELECT 1 FROM products WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [ids]);
}

/**
 * Takes the stock of every line, or none: a line asking for more than is left is a 400 (the
 * caller's transaction rolls the others back). The conditional UPDATE locks the row, so concurrent
 * orders never take the same units twice.
 */
export async function deductStock(tx: Queryable, lines: StockLine[], options: StockMoveOptions = {}): Promise<void> {
  const moved = targets(lines);
  if (!options.rowsLocked) await lockProductsOf(tx, moved);
  for (const t of moved) {
    const { rows } = await tx.query(SQL[t.table].take, [t.id, t.quantity], { name: `stock_take_${t.table}` });
    if (rows.length) continue;
    const left = (await tx.query<{ n: number }>(SQL[t.table].left, [t.id])).rows[0]?.n ?? 0;
    const field = `${t.labels[0]}.quantity`;
    throw badRequest(`${field} is more than the stock left (${left} available)`, { [field]: [`is more than the stock left (${left} available)`] });
  }
}

/**
 * Locks the stock rows of `lines` in the fixed order, before a change that both gives stock back and
 * takes stock (replacement products): giving back the old lines and then taking the new ones would
 * lock rows in two passes, out of order across the two, and two such changes crossing each other's
 * products (A -> B beside B -> A) deadlocked, one of them failing with a 500.
 */
export async function lockStock(tx: Queryable, lines: StockLine[]): Promise<void> {
  const moved = targets(lines);
  await lockProductsOf(tx, moved);
  for (const t of moved) await tx.query(SQL[t.table].lock, [t.id], { name: `stock_lock_${t.table}` });
}

/** An order's line item as far as its stock goes. */
export interface StockedLineItem {
  id: string;
  product_id: string | null;
  variant_id: string | null;
  /** The App API id the line was sold with: set while `variant_id` is null means the variant was deleted since. */
  variant_num_id: number | null;
  quantity: number;
}

/**
 * The stock row a line item gives back to when restocked, or null: none for a custom line (no
 * product), nor for a line whose variant was deleted since (nothing to put the units back on).
 */
function returnTarget(l: StockedLineItem): StockLine | null {
  if (l.product_id === null || (l.variant_num_id !== null && l.variant_id === null)) return null;
  return { productId: l.product_id, variantId: l.variant_id, quantity: l.quantity, label: l.id };
}

/** What a restock of these line items (those whose stock is still deducted) would give back. */
export function stockToReturn(lineItems: readonly StockedLineItem[]): StockLine[] {
  return lineItems.map(returnTarget).filter((l): l is StockLine => l !== null);
}

/** Callers that locked every row already (`lockStock`) say so, and the products are not locked again. */
export interface StockMoveOptions {
  rowsLocked?: boolean;
}

export interface RestockedLine {
  id: string;
  quantity: number;
}

/**
 * Returns the stock of every line item of the order that still has it deducted, once: the
 * conditional UPDATE of `stock_deducted` takes each line exactly once, even when two requests
 * restock the same order at the same time (the second waits for the first's row locks, then finds
 * nothing left to take). A line whose variant was deleted since gives nothing back.
 */
export async function restockOrder(tx: Queryable, orderId: string, options: StockMoveOptions = {}): Promise<RestockedLine[]> {
  const { rows } = await tx.query<StockedLineItem>(
    `UPDATE order_line_items SET stock_deducted = false
      WHERE order_id = $1 AND stock_deducted AND product_id IS NOT NULL
      RETURNING id, product_id, variant_id, variant_num_id, quantity`,
    [orderId],
  );
  const moved = targets(stockToReturn(rows));
  if (!options.rowsLocked) await lockProductsOf(tx, moved);
  for (const t of moved) await tx.query(SQL[t.table].give, [t.id, t.quantity]);
  return rows.map((r) => ({ id: r.id, quantity: r.quantity }));
}
