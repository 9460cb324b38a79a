// The GDPR area's jobs: `gdpr-deadlines` (C9.3; on demand through C12.2) and what a worker runs on
// its own: the deadline job once per UTC day of the service clock, at its first tick after 00:00
// UTC, keyed (job, day) in job_runs so that two workers or a restart never run one day twice (a run
// left unfinished by a dead process is taken over after an hour); and the dispatch recovery.
import type { Deps } from '../deps.js';
import type { Scheduler } from '../jobs/scheduler.js';
import { runGdprDeadlines } from './gdpr.deadlines.js';
import { dayPeriod, runOncePerPeriod } from '../jobs/period-runs.js';
import { recoverDispatches } from './gdpr.dispatch.js';

export const GDPR_DEADLINES_JOB = 'gdpr-deadlines';
const TICK_MS = 60_000;

export function registerGdprJobs(deps: Deps): void {
  deps.jobs.register(GDPR_DEADLINES_JOB, () => runGdprDeadlines(deps));
}

/** Runs the deadline job if no process has run (or is running) it for the current UTC day. */
export function runDailyDeadlines(deps: Deps): Promise<boolean> {
  return runOncePerPeriod(deps, GDPR_DEADLINES_JOB, dayPeriod(deps.clock.now()), async () => (await deps.jobs.run(GDPR_DEADLINES_JOB)).processed);
}

export function scheduleGdprWorkers(deps: Deps, scheduler: Scheduler): void {
  scheduler.every(GDPR_DEADLINES_JOB, TICK_MS, () => runDailyDeadlines(deps));
  scheduler.every('gdpr-dispatch-recovery', TICK_MS, () => recoverDispatches(deps));
}
