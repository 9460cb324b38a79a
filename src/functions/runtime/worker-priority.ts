// A pool's workers at the pool's CPU priority (pool.ts `niceness`, given as piscina's workerData),
// from the start of each worker's load: worker.ts imports this module first, so it runs before the
// evaluator's modules are evaluated and the worker warms up (a replacement's load is CPU too).
//
// Linux keeps a nice value per thread, and `setpriority` given a thread id (from /proc/thread-self)
// changes that thread alone; elsewhere, or if refused, the worker runs at the process's priority.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { isMainThread, workerData } from 'node:worker_threads';

/** What a worker is given as it starts (piscina's `workerData`). */
export interface WorkerSetup {
  /** The pool's nice value (0-19); 0: the process's. */
  niceness: number;
}

function lowerPriority(nice: number): void {
  if (isMainThread || !(nice > 0)) return;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // not Linux, or not allowed: the priority stays as it is
  }
}

lowerPriority((workerData as Partial<WorkerSetup> | null | undefined)?.niceness ?? 0);
