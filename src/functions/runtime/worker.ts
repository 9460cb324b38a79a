// The pool worker's task: mark the run as started (the main thread's deadline counts from here,
// not from when the run was queued), then execute it.
import { epochMicros } from './clock.js';
import { executeRun, warmUp, type PreparedRun } from './evaluate.js';
import type { RunResult } from './limits.js';

export interface WorkerTask {
  run: PreparedRun;
  timeoutMs: number;
  /** One BigInt64 slot: 0 until the worker starts the run, then the start in epoch microseconds. */
  startedAt: SharedArrayBuffer;
}

// Before piscina sees this worker as ready: a replacement worker arrives warm.
warmUp();

export default function runTask(task: WorkerTask): RunResult {
  Atomics.store(new BigInt64Array(task.startedAt), 0, epochMicros());
  return executeRun(task.run, task.timeoutMs);
}
