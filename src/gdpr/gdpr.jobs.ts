// The GDPR area's jobs: `gdpr-deadlines` (C9.3; on demand through C12.2) and what a worker runs on
// its own: the deadline job once per UTC day of the service clock, at its first tick after 00:00
// UTC, keyed (job, day) in job_runs so that two workers or a restart never run one day twice (a run
// left unfinished by a dead process is taken over after an hour); and the dispatch recovery.
import type { Deps } from '../deps.js';
import type { Scheduler } from '../jobs/scheduler.js';
import { runGdprDeadlines, utcDay } from './gdpr.deadlines.js';
import { recoverDispatches } from './gdpr.dispatch.js';

export const GDPR_DEADLINES_JOB = 'gdpr-deadlines';
const TICK_MS = 60_000;
const STALE_RUN_MS = 3600_000;

export function registerGdprJobs(deps: Deps): void {
  deps.jobs.register(GDPR_DEADLINES_JOB, () => runGdprDeadlines(deps));
}

/** Runs the deadline job if no process has run (or is running) it for the current UTC day. */
export async function runDailyDeadlines(deps: Deps): Promise<boolean> {
  const now = deps.clock.now();
  const key = `day:${utcDay(now)}`;
  const { rows } = await deps.db.query(
    `INSERT INTO job_runs (job, period_key, started_at) VALUES ($1, $2, $3)
     ON CONFLICT (job, period_key) DO UPDATE SET started_at = EXCLUDED.started_at
       WHERE job_runs.finished_at IS NULL AND job_runs.started_at < $4
     RETURNING 1`,
    [GDPR_DEADLINES_JOB, key, now, new Date(now.getTime() - STALE_RUN_MS)],
  );
  if (!rows.length) return false;
  const result = await deps.jobs.run(GDPR_DEADLINES_JOB);
  await deps.db.query('UPDATE job_runs SET finished_at = $3, processed = $4 WHERE job = $1 AND period_key = $2', [
    GDPR_DEADLINES_JOB, key, deps.clock.now(), result.processed,
  ]);
  return true;
}

export function scheduleGdprWorkers(deps: Deps, scheduler: Scheduler): void {
  scheduler.every(GDPR_DEADLINES_JOB, TICK_MS, () => runDailyDeadlines(deps));
  scheduler.every('gdpr-dispatch-recovery', TICK_MS, () => recoverDispatches(deps));
}
