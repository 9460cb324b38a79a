// A scheduled job run once per period (a UTC day or hour of the service clock), whichever worker
// process ticks first: the (job, period) key in job_runs is taken by one INSERT, so two workers, or
// a restart within the period, never run one period twice (design.md). The run is recorded as
// finished with what it processed, which is what tells a run that ended from one whose process
// died: an unfinished key older than STALE_RUN_MS is taken over by the next tick. Every scheduled
// job keyed this way goes through here, so none forgets to record its end.
import type { Deps } from '../deps.js';

/** An unfinished run older than this was left by a dead process: the next tick takes it over. */
export const STALE_RUN_MS = 3600_000;

/** The period keys: `day:YYYY-MM-DD` and `YYYY-MM-DDTHH` (UTC), as job_runs has always held them. */
export const dayPeriod = (now: Date) => `day:${now.toISOString().slice(0, 10)}`;
export const hourPeriod = (now: Date) => now.toISOString().slice(0, 13);

/**
 * Runs `run` if no process has run, or is running, `job` for `period`; true when it ran here.
 * `run` gives how many rows it processed, kept with the finished run.
 */
export async function runOncePerPeriod(
  deps: Pick<Deps, 'db' | 'clock'>,
  job: string,
  period: string,
  run: () => Promise<number>,
): Promise<boolean> {
  const startedAt = deps.clock.now();
  const { rows } = await deps.db.query(
    `INSERT INTO job_runs (job, period_key, started_at) VALUES ($1, $2, $3)
     ON CONFLICT (job, period_key) DO UPDATE SET started_at = EXCLUDED.started_at
       WHERE job_runs.finished_at IS NULL AND job_runs.started_at < $4
     RETURNING 1`,
    [job, period, startedAt, new Date(startedAt.getTime() - STALE_RUN_MS)],
  );
  if (!rows.length) return false;
  const processed = await run();
  // Only this claim's row: a run so slow that another process took the key over leaves the
  // takeover's row to the takeover.
  await deps.db.query('UPDATE job_runs SET finished_at = $4, processed = $5 WHERE job = $1 AND period_key = $2 AND started_at = $3', [
    job, period, startedAt, deps.clock.now(), processed,
  ]);
  return true;
}
