// Stock moved by orders (C7.1, C7.2). A line item with a variant moves the variant's stock; one of a
// product without variants moves the product-level stock (C14.1: the two are independent). Custom
// line items (no product) move nothing. Rows are changed in a fixed order (by table, then id), so
// two orders touching the same products cannot deadlock each other.
import type { Queryable } from '../db/db.js';
import { badRequest } from '../http/errors.js';

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
  quantity: number;
  labels: string[];
}

function targets(lines: StockLine[]): Target[] {
  const byKey = new Map<string, Target>();
  for (const l of lines) {
    if (!l.productId) continue;
    const t: Pick<Target, 'table' | 'id'> = l.variantId ? { table: 'variants', id: l.variantId } : { table: 'products', id: l.productId };
    const key = `${t.table}:${t.id}`;
    const found = byKey.get(key);
    if (found) {
      found.quantity += l.quantity;
      found.labels.push(l.label);
    } else byKey.set(key, { ...t, quantity: l.quantity, labels: [l.label] });
  }
  return [...byKey.values()].sort((a, b) => (a.table === b.table ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.table === 'products' ? -1 : 1));
}

const SQL = {
  variants: {
    take: 'UPDATE variants SET stock = stock - $2 WHERE id = $1 AND stock >= $2 RETURNING stock',
    left: 'SELECT stock AS n FROM variants WHERE id = $1',
    give: 'UPDATE variants SET stock = stock + $2 WHERE id = $1',
  },
  products: {
    take: 'UPDATE products SET inventory_quantity = inventory_quantity - $2 WHERE id = $1 AND inventory_quantity >= $2 RETURNING inventory_quantity',
    left: 'SELECT inventory_quantity AS n FROM products WHERE id = $1',
    give: 'UPDATE products SET inventory_quantity = inventory_quantity + $2 WHERE id = $1',
  },
} as const;

/**
 * Takes the stock of every line, or none: a line asking for more than is left is a 400 (the
 * caller's transaction rolls the others back). The conditional UPDATE locks the row, so concurrent
 * orders never take the same units twice.
 */
export async function deductStock(tx: Queryable, lines: StockLine[]): Promise<void> {
  for (const t of targets(lines)) {
    const { rows } = await tx.query(SQL[t.table].take, [t.id, t.quantity], { name: `stock_take_${t.table}` });
    if (rows.length) continue;
    const left = (await tx.query<{ n: number }>(SQL[t.table].left, [t.id])).rows[0]?.n ?? 0;
    const field = `${t.labels[0]}.quantity`;
    throw badRequest(`${field} is more than the stock left (${left} available)`, { [field]: [`is more than the stock left (${left} available)`] });
  }
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
export async function restockOrder(tx: Queryable, orderId: string): Promise<RestockedLine[]> {
  const { rows } = await tx.query<{ id: string; product_id: string; variant_id: string | null; variant_num_id: number | null; quantity: number }>(
    `UPDATE order_line_items SET stock_deducted = false
      WHERE order_id = $1 AND stock_deducted AND product_id IS NOT NULL
      RETURNING id, product_id, variant_id, variant_num_id, quantity`,
    [orderId],
  );
  const lines: StockLine[] = [];
  for (const r of rows) {
    // The line had a variant that no longer exists: nothing to put the units back on.
    if (r.variant_num_id !== null && r.variant_id === null) continue;
    lines.push({ productId: r.product_id, variantId: r.variant_id, quantity: r.quantity, label: r.id });
  }
  for (const t of targets(lines)) await tx.query(SQL[t.table].give, [t.id, t.quantity]);
  return rows.map((r) => ({ id: r.id, quantity: r.quantity }));
}
