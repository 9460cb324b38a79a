// Background jobs by name. Each area registers its jobs here; the operator route of C12.2 runs one
// on demand and workers run them on their schedules. Only `worker`/`all` processes schedule.
//
// Every run gets a run id of its own: its log lines ('job run finished' / 'job run failed') carry
// the job name and that id, and it is counted in svc_job_runs_total{job, outcome}.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Metrics } from '../platform/metrics.js';

export interface JobResult {
  processed: number;
}

export type JobRunner = () => Promise<JobResult>;

/** Marks an error the registry already logged, so the scheduler that ran the job does not log it again. */
export const LOGGED = Symbol('svc.logged');

export class JobRegistry {
  private readonly jobs = new Map<string, JobRunner>();
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly log: Logger, private readonly metrics: Metrics) {}

  register(name: string, run: JobRunner): void {
    if (this.jobs.has(name)) throw new Error(`job ${name} is already registered`);
    this.jobs.set(name, run);
  }

  names(): string[] {
    return [...this.jobs.keys()];
  }

  has(name: string): boolean {
    return this.jobs.has(name);
  }

  /** Runs the job to its end; tracked so a graceful shutdown can wait for it. */
  async run(name: string): Promise<JobResult> {
    const job = this.jobs.get(name);
    if (!job) throw new Error(`unknown job ${name}`);
    const runId = randomUUID();
    const started = performance.now();
    const p = job();
    this.running.add(p);
    try {
      const result = await p;
      const seconds = (performance.now() - started) / 1000;
      this.metrics.jobRuns.inc({ job: name, outcome: 'success' });
      this.metrics.jobDuration.observe({ job: name }, seconds);
      this.log.info({ job: name, runId, processed: result.processed, durationMs: Math.round(seconds * 1000) }, 'job run finished');
      return result;
    } catch (err) {
      this.metrics.jobRuns.inc({ job: name, outcome: 'failure' });
      this.metrics.jobDuration.observe({ job: name }, (performance.now() - started) / 1000);
      this.log.error({ job: name, runId, err }, 'job run failed');
      if (err !== null && typeof err === 'object') Object.defineProperty(err, LOGGED, { value: true });
      throw err;
    } finally {
      this.running.delete(p);
    }
  }

  /** Resolves when every job run in flight has finished. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
