// Background jobs by name. Each area registers its jobs here; the operator route of C12.2 runs one
// on demand and workers run them on their schedules. Only `worker`/`all` processes schedule.
export interface JobResult {
  processed: number;
}

export type JobRunner = () => Promise<JobResult>;

export class JobRegistry {
  private readonly jobs = new Map<string, JobRunner>();
  private readonly running = new Set<Promise<unknown>>();

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
    const p = job();
    this.running.add(p);
    try {
      return await p;
    } finally {
      this.running.delete(p);
    }
  }

  /** Resolves when every job run in flight has finished. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
