// The watchdog of one task while a pool worker runs it (pool.ts queues the task and hands it out;
// this watches it): a worker cannot be interrupted from inside, so the main thread alone can hold
// each run to its compile budget and deadline, and only it can tell, once the task failed (a run
// stopped, or the worker dead, out of its heap as a rule), which run is to blame and which are to
// be sent again. Apart from the queue because it knows nothing of waiting or of other tasks: one
// task, its progress slots (clock.ts) and how it ended.
//
// - The deadline is enforced from the main thread with a timer (the event loop never waits): when a
//   run has been executing for `timeoutMs` its AbortSignal fires, piscina terminates the worker that
//   runs it and starts a replacement (minThreads), and the run fails with TimeoutError. The deadline
//   counts from when the worker starts the run (it writes the start into a shared slot). Compiling
//   the expression comes first and is not the run's time (C11.4's limit is the evaluation's): it has
//   its own budget, `compileTimeoutMs` (10 s, limits.ts `COMPILE_TIMEOUT_MS`), past which the worker is stopped the same way and the
//   run fails with RuntimeError.
import { COMPILE_SLOT, END_SLOT, epochMicros, SLOTS_PER_RUN, START_SLOT } from './clock.js';
import { failure, type PreparedRun } from './evaluate.js';
import type { RunResult } from './limits.js';

/**
 * How long a worker may take to start a task's first run before the task is given up ("no worker
 * started the run"): a worker that cannot load would otherwise hold its runs to the pool's whole
 * wait. A second for a pool at the process's priority. A pool at a lower priority (niceness) gets
 * its compile budget instead: its workers yield the CPU by design, and on a busy machine a niced
 * worker was seen taking more than a second to start a run it had been handed (the declarations'
 * check then answered 503 for a manifest it could have checked).
 */
export const NOT_STARTED_MS = 1000;

/**
 * A run's outcome in a task: its result, or null when another run of the same task overran or
 * killed the worker before this one's result came back (it is sent again, in a task of its own).
 */
export type Outcome = RunResult | null;

/** The run the watchdog stopped: which, after how long, and whether it was still compiling. */
interface Overrun {
  run: number;
  ms: number;
  compiling: boolean;
}

/** One task under watch, from just before it is handed to a worker until it ends. */
export interface TaskWatch {
  /** The task's progress slots, for the worker to stamp (clock.ts). */
  progress: SharedArrayBuffer;
  /** Aborts the task (its worker is terminated) when a run overruns or no worker takes it up. */
  signal: AbortSignal;
  /** Each run's outcome once the task failed with `err` (piscina's rejection): who is to blame, who goes again. */
  failed(err: unknown): Outcome[];
  /** Whether a run was stopped over its deadline (C11.4's TimeoutError; a compile stopped is not). */
  timedOut(): boolean;
  /** Stops the watch once the task has ended. */
  stop(): void;
}

export function watchTask(runs: readonly PreparedRun[], limits: { timeoutMs: number; compileTimeoutMs: number; notStartedMs: number }): TaskWatch {
  const { timeoutMs, compileTimeoutMs, notStartedMs } = limits;
  const progress = new BigInt64Array(new SharedArrayBuffer(8 * SLOTS_PER_RUN * runs.length));
  const slot = (i: number, s: number) => Atomics.load(progress, SLOTS_PER_RUN * i + s);
  const compileStartOf = (i: number) => slot(i, COMPILE_SLOT);
  const startOf = (i: number) => slot(i, START_SLOT);
  const endOf = (i: number) => slot(i, END_SLOT);
  /** When the worker took the run up: its start, or while it compiles, its compile's start (0n: not yet). */
  const takenUpAt = (i: number) => startOf(i) || compileStartOf(i);
  /** The run the worker is on: compiling or started, and not ended (-1 between runs, before the first, after the last). */
  const current = () => {
    for (let i = 0; i < runs.length; i++) if (endOf(i) === 0n) return compileStartOf(i) === 0n ? -1 : i;
    return -1;
  };
  const sent = epochMicros();
  const controller = new AbortController();
  let overran: Overrun | null = null;
  let neverStarted = false;
  let timer: NodeJS.Timeout | undefined;
  // Wakes at the earliest moment the run in progress could be over its limit (its compile over
  // the compile budget, or its evaluation over the deadline), and again if it started late or the
  // worker has moved on. A task whose first run a worker never takes up (a worker that cannot
  // load) is given up after `notStartedMs`.
  const watch = (delayMs: number) => {
    timer = setTimeout(() => {
      const now = epochMicros();
      const at = current();
      if (at === -1) {
        if (compileStartOf(0) === 0n && Number(now - sent) / 1000 >= notStartedMs) {
          neverStarted = true;
          controller.abort();
        } else watch(compileStartOf(0) === 0n ? timeoutMs : 1);
        return;
      }
      const compiling = startOf(at) === 0n;
      const limit = compiling ? compileTimeoutMs : timeoutMs;
      const ran = Number(now - takenUpAt(at)) / 1000;
      if (ran >= limit) {
        overran = { run: at, ms: ran, compiling };
        controller.abort();
      } else {
        // While it compiles, look again within a run's limit: the evaluation may start any moment
        // after the compile ends, and its 50 ms count from then (asleep for the rest of the compile
        // budget, a runaway after a cold compile went on for seconds).
        watch(compiling ? Math.min(limit - ran, timeoutMs) : limit - ran);
      }
    }, Math.max(1, Math.ceil(delayMs)));
  };
  watch(timeoutMs);

  function failed(err: unknown): Outcome[] {
    const stopped = overran as Overrun | null;
    if (stopped) {
      const ms = Math.round(stopped.ms * 1000) / 1000;
      // A compile stopped is no evaluation over C11.4's limit: RuntimeError, as a compile error is.
      if (stopped.compiling) {
        return runs.map((run, i) => (i === stopped.run ? failure('RuntimeError', `the expression was still compiling after ${ms} ms and was stopped; the limit is ${compileTimeoutMs} ms`, run.inputBytes) : null));
      }
      return runs.map((run, i) => (i === stopped.run ? failure('TimeoutError', `the run was stopped after ${ms} ms; the limit is ${timeoutMs} ms`, run.inputBytes, ms) : null));
    }
    if (neverStarted) return runs.map((run) => failure('RuntimeError', `no worker started the run within ${notStartedMs} ms`, run.inputBytes));
    // The worker was lost before it took up any of these runs: they are sent again.
    if (compileStartOf(0) === 0n) return runs.map(() => null);
    // The worker died (out of memory). Among several runs none is blamed: the heap it ran out of
    // held the others' inputs and programs too, so the run it was on may not be the one that
    // filled it. Each is sent again alone (`settle`, pool.ts), where a run that kills its worker is to blame.
    if (runs.length > 1) return runs.map(() => null);
    const ms = Math.round(Number(epochMicros() - (current() === -1 ? sent : takenUpAt(0))) / 1000) / 1000;
    return [failure('RuntimeError', workerFailure(err), runs[0].inputBytes, ms)];
  }

  return {
    progress: progress.buffer as SharedArrayBuffer,
    signal: controller.signal,
    failed,
    timedOut: () => (overran as Overrun | null)?.compiling === false,
    stop: () => clearTimeout(timer),
  };
}

function workerFailure(err: unknown): string {
  const code = (err as { code?: string })?.code;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') return 'the run exceeded the memory limit and was stopped';
  return `the run's worker failed: ${err instanceof Error ? err.message : String(err)}`;
}
