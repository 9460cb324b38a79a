// Periodic background work of `worker` and `all` processes. Each task runs at most once at a time
// in this process; correctness across processes comes from the tasks themselves (row claims with
// SKIP LOCKED, job_runs keys), never from this timer.
export class Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(private readonly onError: (task: string, err: unknown) => void) {}

  every(task: string, intervalMs: number, run: () => Promise<unknown>): void {
    let busy = false;
    const tick = () => {
      if (busy || this.stopped) return;
      busy = true;
      const p = run()
        .catch((err) => this.onError(task, err))
        .finally(() => {
          busy = false;
          this.inFlight.delete(p);
        });
      this.inFlight.add(p);
    };
    const timer = setInterval(tick, intervalMs);
    this.timers.add(timer);
    setImmediate(tick);
  }

  /** Stop starting work and wait for what is running. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
    await Promise.allSettled([...this.inFlight]);
  }
}
