// Deliveries attempted at once rather than at a worker's next wake-up, waiting until each has been
// sent: GDPR webhooks after the merchant's response (C9.1) and test deliveries (issue 14). The
// engine's `sendNow` attempts those it can claim; a worker process (or this one's own loop) that
// heard the same NOTIFY may hold some of them, and those are waited for, as they are being sent.
// Nothing here holds a transaction across I/O.
import type { Deps } from '../deps.js';

/** How often a delivery another worker holds is looked at again. */
const FOREIGN_POLL_MS = 200;

/** Those of `ids` not yet sent (still `pending` or `retrying`). */
async function openDeliveries(deps: Pick<Deps, 'db'>, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const { rows } = await deps.db.query<{ id: string }>(
    `SELECT id FROM webhook_deliveries WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid) AND status IN ('pending', 'retrying')`,
    [JSON.stringify(ids)],
  );
  return rows.map((r) => r.id);
}

/**
 * Send now what is still unsent, wait up to `waitMs` for what another worker is sending; true when
 * all were sent (whatever their HTTP results). A delivery with retries left is unsent until it
 * finishes, so this is for deliveries of one attempt (GDPR, test).
 */
export async function sendAll(deps: Pick<Deps, 'db' | 'webhooks'>, deliveryIds: string[], waitMs: number): Promise<boolean> {
  const outcomes = await deps.webhooks.sendNow(deliveryIds);
  const done = new Set(outcomes.map((o) => o.deliveryId));
  let open = await openDeliveries(deps, deliveryIds.filter((id) => !done.has(id)));
  const until = Date.now() + waitMs;
  while (open.length && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, FOREIGN_POLL_MS));
    // Not due (a clock moved back) or released by a worker that had no slot: take them now.
    const more = await deps.webhooks.sendNow(open);
    for (const o of more) done.add(o.deliveryId);
    open = await openDeliveries(deps, open.filter((id) => !done.has(id)));
  }
  return open.length === 0;
}
