// Periodic background work of `worker` and `all` processes. Each task runs at most once at a time
// in this process; correctness across processes comes from the tasks themselves (row claims with
// SKIP LOCKED, job_runs keys), never from this timer.
//
// Each tick is counted (svc_scheduler_task_runs_total{task, outcome}) and numbered per task; a
// failure is logged with the task name and that number (the log line's pid tells processes apart).
import type { Logger } from 'pino';
import type { Metrics } from '../platform/metrics.js';
import { LOGGED } from './registry.js';

export class Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(private readonly log: Logger, private readonly metrics: Metrics) {}

  every(task: string, intervalMs: number, run: () => Promise<unknown>): void {
    let busy = false;
    let tick = 0;
    const start = () => {
      if (busy || this.stopped) return;
      busy = true;
      const n = ++tick;
      const p = run()
        .then(
          () => this.metrics.taskRuns.inc({ task, outcome: 'success' }),
          (err) => {
            this.metrics.taskRuns.inc({ task, outcome: 'failure' });
            // A job run through the registry was logged there, with its run id.
            const logged = err !== null && typeof err === 'object' && LOGGED in err;
            this.log[logged ? 'debug' : 'error']({ task, tick: n, err }, 'background task failed');
          },
        )
        .finally(() => {
          busy = false;
          this.inFlight.delete(p);
        });
      this.inFlight.add(p);
    };
    const timer = setInterval(start, intervalMs);
    this.timers.add(timer);
    setImmediate(start);
  }

  /** Stop starting work and wait for what is running. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
    await Promise.allSettled([...this.inFlight]);
  }
}
