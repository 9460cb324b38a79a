// C8.10: request and response bodies of finished deliveries are pruned after
// SVC_DELIVERY_RETENTION_DAYS; the delivery record, its status and its attempt history stay.
import type { Deps } from '../deps.js';
import { deleteRunsBefore } from '../functions/function-runs.repo.js';
import { hourPeriod, runOncePerPeriod } from '../jobs/period-runs.js';

const PRUNE_BATCH = 5000;
const DAY_MS = 86_400_000;

/**
 * The instant before which kept things expire. SVC_DELIVERY_RETENTION_DAYS may be any whole number
 * from 1, a very large one meaning "keep, in effect, for ever": a window reaching before the epoch
 * (or past what a Date can hold, which made every run fail on an invalid date) keeps everything.
 */
export function retentionCutoff(deps: Pick<Deps, 'clock' | 'config'>): Date {
  return new Date(Math.max(deps.clock.nowMs() - deps.config.deliveryRetentionDays * DAY_MS, 0));
}

/** Prune bodies of deliveries created before the retention window; answers how many were pruned. */
export async function pruneDeliveryBodies(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<number> {
  const now = deps.clock.now();
  const cutoff = retentionCutoff(deps);
  let pruned = 0;
  // Batches keep each statement short (PGlite runs one transaction at a time).
  for (;;) {
    const { rowCount } = await deps.db.query(
      `UPDATE webhook_deliveries SET request_body = NULL, response_body = NULL, bodies_pruned_at = $2
        WHERE id IN (SELECT id FROM webhook_deliveries
                      WHERE bodies_pruned_at IS NULL AND created_at < $1 AND status IN ('success', 'failed')
                      LIMIT $3::int)`,
      [cutoff, now, PRUNE_BATCH],
    );
    pruned += rowCount;
    if (rowCount < PRUNE_BATCH) return pruned;
  }
}

/**
 * An event's payload is its deliveries' body (C8.2), customers' emails and addresses among them: it
 * goes with their bodies, once the event has been fanned out (migration 0022). The event row stays,
 * with a JSON null payload: its deliveries reference it.
 */
export async function pruneEventPayloads(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<number> {
  const cutoff = retentionCutoff(deps);
  let pruned = 0;
  for (;;) {
    const { rowCount } = await deps.db.query(
      `UPDATE events SET payload = 'null'::jsonb
        WHERE id IN (SELECT id FROM events
                      WHERE fanned_out_at IS NOT NULL AND payload <> 'null'::jsonb AND created_at < $1
                      LIMIT $2::int)`,
      [cutoff, PRUNE_BATCH],
    );
    pruned += rowCount;
    if (rowCount < PRUNE_BATCH) return pruned;
  }
}

/** C11.5: function run records are kept as long as delivery bodies, then deleted whole. */
export async function deleteExpiredFunctionRuns(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<number> {
  const cutoff = retentionCutoff(deps);
  let deleted = 0;
  for (;;) {
    const n = await deleteRunsBefore(deps.db, cutoff, PRUNE_BATCH);
    deleted += n;
    if (n < PRUNE_BATCH) return deleted;
  }
}

/** Everything kept for SVC_DELIVERY_RETENTION_DAYS: delivery bodies (C8.10) and the events' payloads, and function runs (C11.5). */
export async function applyRetention(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<number> {
  return (await pruneDeliveryBodies(deps)) + (await pruneEventPayloads(deps)) + (await deleteExpiredFunctionRuns(deps));
}

/**
 * The scheduled run: once per UTC hour of the service clock, recorded in job_runs so that several
 * workers, or a restart, run one hour once (design.md).
 */
export function runScheduledRetention(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<boolean> {
  return runOncePerPeriod(deps, 'webhook-retention', hourPeriod(deps.clock.now()), () => applyRetention(deps));
}
