// The request's overall state from its apps' states (C9.2), and what follows once every app is done:
//   every app acknowledged (or completed)  -> acknowledged   (from pending or dispatched)
//   every app completed                    -> completed      (not from failed: a failure stays)
//   no app at all, once dispatched         -> completed      (there is nothing to wait for)
// and, for customers/redact, the platform's own erasure once every app completed or failed.
// Called inside a transaction holding the request's row lock.
import type { Queryable } from '../db/db.js';
import type { AppStateRow, GdprRequestStatus, RequestRow } from './gdpr.repo.js';
import { redactCustomer } from './gdpr.redaction.js';

export async function settleRequest(tx: Queryable, req: RequestRow, apps: AppStateRow[], now: Date): Promise<RequestRow> {
  let status: GdprRequestStatus = req.status;
  let completedAt = req.completed_at;
  const all = (...states: string[]) => apps.every((a) => states.includes(a.status));
  if (status !== 'failed' && status !== 'completed') {
    if (apps.length === 0) {
      if (status === 'dispatched') status = 'completed';
    } else if (all('completed')) status = 'completed';
    else if (all('acknowledged', 'completed')) status = 'acknowledged';
  }
  if (status === 'completed' && !completedAt) completedAt = now;

  let redactedAt = req.redacted_at;
  const finished = apps.length ? all('completed', 'failed') : status === 'completed';
  if (req.request_type === 'customer_redact' && !redactedAt && finished) {
    await redactCustomer(tx, { storeId: req.store_id, customerId: req.customer_id, customerEmail: req.customer_email, orderIds: req.order_ids }, now);
    redactedAt = now;
  }
  if (status === req.status && completedAt === req.completed_at && redactedAt === req.redacted_at) return req;
  await tx.query('UPDATE gdpr_requests SET status = $2, completed_at = $3, redacted_at = $4, updated_at = $5 WHERE id = $1', [
    req.id, status, completedAt, redactedAt, now,
  ]);
  return { ...req, status, completed_at: completedAt, redacted_at: redactedAt, updated_at: now };
}
