// Merchant notifications (C9.5): short messages for the store's staff, written in the transaction
// of the change that causes them, read newest first through `GET /notifications`.
import { Type } from 'typebox';
import type { Queryable } from '../db/db.js';
import { Timestamp } from '../http/schemas.js';
import { uuidv7 } from '../ids.js';

export interface NewNotification {
  storeId: string;
  /** What happened, e.g. `gdpr_app_failed`; the list filters on it. */
  type: string;
  title: string;
  message: string;
  /** Ids and facts a client needs to link the notification to its subject. */
  data?: Record<string, unknown>;
}

interface NotificationRow {
  id: string;
  store_id: string;
  type: string;
  title: string;
  message: string;
  data: Record<string, unknown>;
  created_at: Date;
}

export interface NotificationView {
  notificationId: string;
  storeId: string;
  type: string;
  title: string;
  message: string;
  data: Record<string, unknown>;
  createdAt: string;
}

/** The notification (C9.5), as `notificationView` writes it. */
export const NotificationSchema = Type.Object({
  notificationId: Type.String({ description: 'the notification id (UUID)' }),
  storeId: Type.String(),
  type: Type.String({ description: 'what happened, e.g. gdpr_app_failed' }),
  title: Type.String(),
  message: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'ids and facts that link the notification to its subject; keys depend on the type' }),
  createdAt: Timestamp(),
});

export function notificationView(row: NotificationRow): NotificationView {
  return {
    notificationId: row.id,
    storeId: row.store_id,
    type: row.type,
    title: row.title,
    message: row.message,
    data: row.data,
    createdAt: row.created_at.toISOString(),
  };
}

export async function createNotification(q: Queryable, n: NewNotification, now: Date): Promise<string> {
  const id = uuidv7(now.getTime());
  await q.query(
    'INSERT INTO notifications (id, store_id, type, title, message, data, created_at) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)',
    [id, n.storeId, n.type, n.title, n.message, JSON.stringify(n.data ?? {}), now],
  );
  return id;
}

/** The store's notifications, newest first; `type` filters exactly. */
export async function listNotifications(q: Queryable, storeId: string, opts: { type?: string; limit: number; offset: number }) {
  const params: unknown[] = [storeId, opts.type ?? null];
  const where = 'store_id = $1 AND ($2::text IS NULL OR type = $2::text)';
  const [page, count] = await Promise.all([
    q.query<NotificationRow>(
      `SELECT id, store_id, type, title, message, data, created_at FROM notifications WHERE ${where}
        ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [...params, opts.limit, opts.offset],
    ),
    q.query<{ n: number }>(`SELECT count(*)::int AS n FROM notifications WHERE ${where}`, params),
  ]);
  return { notifications: page.rows.map(notificationView), total: count.rows[0].n };
}
