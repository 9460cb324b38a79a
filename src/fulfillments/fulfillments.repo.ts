// Fulfillments' SQL. A fulfillment keeps two lists of line-item quantities as JSON: `line_items`
// as the app sent them, `covered` as resolved against the order (fulfillments.service.ts).
import type { Queryable } from '../db/db.js';
import { insertRow, updateRow } from '../db/sql.js';
import type { FulfillmentStatus, Qty } from './fulfillments.input.js';

export interface FulfillmentRow {
  id: string;
  order_id: string;
  store_id: string;
  status: FulfillmentStatus;
  service_id: string | null;
  tracking_number: string | null;
  tracking_url: string | null;
  tracking_company: string | null;
  line_items: Qty[];
  covered: Qty[];
  notify_customer: boolean;
  created_at: Date;
  updated_at: Date;
}

const CASTS = { line_items: 'jsonb', covered: 'jsonb' };

/** The order's fulfillments, oldest first. */
export async function fulfillmentsOf(q: Queryable, orderId: string): Promise<FulfillmentRow[]> {
  const { rows } = await q.query<FulfillmentRow>('SELECT * FROM fulfillments WHERE order_id = $1 ORDER BY created_at, id', [orderId]);
  return rows;
}

export async function fulfillmentCount(q: Queryable, orderId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM fulfillments WHERE order_id = $1', [orderId]);
  return rows[0].n;
}

/** The order of the store's fulfillment `id`, or null. */
export async function orderIdOfFulfillment(q: Queryable, storeId: string, id: string): Promise<string | null> {
  const { rows } = await q.query<{ order_id: string }>('SELECT order_id FROM fulfillments WHERE id = $1 AND store_id = $2', [id, storeId]);
  return rows[0]?.order_id ?? null;
}

export async function insertFulfillment(q: Queryable, row: Omit<FulfillmentRow, 'updated_at'>): Promise<FulfillmentRow> {
  const { rows } = await insertRow<FulfillmentRow>(q, 'fulfillments', { ...row, updated_at: row.created_at }, { casts: CASTS, returning: '*' });
  return rows[0];
}

export async function updateFulfillmentRow(
  q: Queryable,
  id: string,
  changes: Pick<FulfillmentRow, 'status' | 'tracking_number' | 'tracking_url' | 'tracking_company' | 'updated_at'>,
): Promise<FulfillmentRow> {
  const { rows } = await updateRow<FulfillmentRow>(q, 'fulfillments', { id }, { ...changes }, { returning: '*' });
  return rows[0];
}
