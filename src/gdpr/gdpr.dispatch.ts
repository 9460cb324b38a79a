// Sending a request's webhooks after the merchant's response (C9.1) and moving it to `dispatched`
// once they were sent, whatever their HTTP results. Nothing here holds a transaction across I/O:
// the deliveries were committed with the request; sending is the webhook engine's `sendNow`
// (src/webhooks/send-now.ts).
//
// A worker process's delivery loop may pick some of them up first (it hears the same NOTIFY):
// those are waited for, as they are being sent. If this process dies before the request is marked,
// the deliveries are still in the queue and `recoverDispatches` (workers, every minute, and the
// deadline job) marks the request once nothing of its first dispatch is left unsent.
import type { Deps } from '../deps.js';
import { appStatesOf, findRequest } from './gdpr.repo.js';
import { settleRequest } from './gdpr.state.js';
import { sendAll } from '../webhooks/send-now.js';

/** How long to wait for deliveries another worker took (its lease is 20 s). */
const FOREIGN_WAIT_MS = 30_000;
/** A request still `pending` this long after it was made lost its dispatcher. */
const RECOVERY_AFTER_MS = 120_000;

/** `pending` -> `dispatched` (once), then whatever the apps' states already imply. */
export async function markDispatched(deps: Deps, requestId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const req = await findRequest(tx, requestId, { lock: true });
    if (!req) return;
    const now = deps.clock.now();
    const status = req.status === 'pending' ? 'dispatched' : req.status;
    await tx.query('UPDATE gdpr_requests SET status = $2, dispatched_at = coalesce(dispatched_at, $3), updated_at = $3 WHERE id = $1', [requestId, status, now]);
    const apps = (await appStatesOf(tx, [requestId])).get(requestId) ?? [];
    await settleRequest(tx, { ...req, status, dispatched_at: req.dispatched_at ?? now }, apps, now);
  });
}

/** Background dispatches of one service instance, so that a test or a shutdown can wait for them. */
export class GdprDispatcher {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: Deps) {}

  /** Dispatch once `after` resolves (the response was sent). Tracked from this call on. */
  dispatchAfter(after: Promise<unknown>, requestId: string, deliveryIds: string[]): void {
    const p = after
      .then(async () => {
        if (await sendAll(this.deps, deliveryIds, FOREIGN_WAIT_MS)) await markDispatched(this.deps, requestId);
      })
      .catch((err) => this.report(err, requestId))
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /**
   * Send these deliveries now without waiting for them (a final notice that an app's late call
   * caused, gdpr.service.ts). Tracked like a dispatch; what is left unsent stays in the delivery
   * queue for a worker's loop.
   */
  send(requestId: string, deliveryIds: string[]): void {
    if (!deliveryIds.length) return;
    const p = this.deps.webhooks.sendNow(deliveryIds)
      .then(() => undefined)
      .catch((err) => this.deps.log.error({ err, gdprRequestId: requestId }, 'sending GDPR notices failed'))
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** Resolves when every dispatch started so far (and any started meanwhile) has finished. */
  async settle(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  private report(err: unknown, requestId: string) {
    this.deps.log.error({ err, gdprRequestId: requestId }, 'GDPR dispatch failed; recovery will finish it');
  }
}

const dispatchers = new WeakMap<Deps, GdprDispatcher>();

export function gdprDispatcher(deps: Deps): GdprDispatcher {
  let d = dispatchers.get(deps);
  if (!d) dispatchers.set(deps, (d = new GdprDispatcher(deps)));
  return d;
}

/**
 * Requests left `pending` by a dispatcher that never finished (a crash, a restart): send what of
 * their first dispatch is still unsent and mark them once nothing is. Returns the requests marked.
 */
export async function recoverDispatches(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.nowMs() - RECOVERY_AFTER_MS);
  const { rows } = await deps.db.query<{ id: string }>(
    `SELECT id FROM gdpr_requests WHERE status = 'pending' AND requested_at < $1 ORDER BY requested_at LIMIT 500`,
    [cutoff],
  );
  let marked = 0;
  for (const { id } of rows) {
    const { rows: links } = await deps.db.query<{ delivery_id: string }>(
      `SELECT delivery_id FROM gdpr_request_deliveries WHERE request_id = $1 AND kind = 'initial'`,
      [id],
    );
    if (await sendAll(deps, links.map((l) => l.delivery_id), 0)) {
      await markDispatched(deps, id);
      marked++;
    }
  }
  return marked;
}
