// The pool worker's task: one or more runs, executed in order. Each run's compile start, start and
// end go into shared slots as they happen (clock.ts), so the main thread's deadline counts per run,
// from when the worker starts evaluating it (not from when it was queued, nor from when the task's
// first run started, nor while its expression compiles: that has its own, larger budget).
// First: the worker's priority is set before anything else of it loads (worker-priority.ts).
import './worker-priority.js';
import { COMPILE_SLOT, END_SLOT, epochMicros, SLOTS_PER_RUN, START_SLOT } from './clock.js';
import { compileCached, executeRun, warmUp, type PreparedRun } from './evaluate.js';
import type { RunResult } from './limits.js';

/** A run of a task, its input named by index into the task's `inputs` (sent once for all the runs that share it). */
export type TaskRun = Omit<PreparedRun, 'inputJson'> & { input: number };

export interface WorkerTask {
  /** The distinct inputs of the task's runs, as JSON text. */
  inputs: string[];
  runs: TaskRun[];
  timeoutMs: number;
  /** SLOTS_PER_RUN BigInt64 slots per run (compile start, start, end), epoch microseconds; 0 until then. */
  progress: SharedArrayBuffer;
}

// Before piscina sees this worker as ready: a replacement worker arrives warm.
warmUp();

export default function runTask(task: WorkerTask): RunResult[] {
  const progress = new BigInt64Array(task.progress);
  // Each input is parsed once, by the first run that reads it: CEL never changes its variables,
  // so the runs of a target share the value as they share the text.
  const parsed = new Map<number, unknown>();
  const inputOf = (index: number) => () => {
    if (!parsed.has(index)) parsed.set(index, JSON.parse(task.inputs[index]));
    return parsed.get(index);
  };
  return task.runs.map(({ input, ...run }, i) => {
    const at = SLOTS_PER_RUN * i;
    Atomics.store(progress, at + COMPILE_SLOT, epochMicros());
    if (run.compileOnly) {
      // A check is all compile: it never starts a run's clock, so only the compile budget holds it
      // (a check descheduled for 50 ms on a busy machine was stopped as a runaway, and answered 503).
      // Its program is not kept (evaluate.ts `executeRun`): compiled, answered, dropped.
      const checked = executeRun({ ...run, inputJson: task.inputs[input] }, task.timeoutMs);
      Atomics.store(progress, at + END_SLOT, epochMicros());
      return checked;
    }
    compileCached(run.expression);
    Atomics.store(progress, at + START_SLOT, epochMicros());
    const result = executeRun({ ...run, inputJson: task.inputs[input] }, task.timeoutMs, inputOf(input));
    Atomics.store(progress, at + END_SLOT, epochMicros());
    return result;
  });
}
