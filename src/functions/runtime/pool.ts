// The sandbox: runs are evaluated in a small pool of worker threads (piscina), because CEL always
// terminates but can take very long (nested comprehensions over a big list), and evaluation in the
// main thread could not be interrupted.
//
// - Each worker has heap caps (`resourceLimits`): an expression that allocates without bound kills
//   its worker, not the service.
// - The deadline is enforced from the main thread with a timer (the event loop never waits): when a
//   run has been executing for `timeoutMs` its AbortSignal fires, piscina terminates the worker that
//   runs it and starts a replacement (minThreads), and the run fails with TimeoutError. The deadline
//   counts from when the worker starts the run (it writes the start into a shared slot).
// - The queue is ours, not piscina's: a run goes to piscina only when a loaded worker is free, so a
//   run never waits inside piscina, where withdrawing it could cost a worker (piscina terminates the
//   worker a task was posted to) and where its maxQueue does not count tasks that carry a signal.
//   At most `maxQueue` runs wait, each at most `maxWaitMs`. A run refused for a full queue, or
//   withdrawn after waiting, fails at once with TimeoutError: C11.4's list has no "busy" kind, and
//   for the checkout a saturated pool is a function that did not answer in time; the message says
//   the pool was saturated, not that the expression was slow. `run` never throws.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { epochMicros } from './clock.js';
import { failure, isPrepared, prepareRun, type PreparedRun, type RunRequest } from './evaluate.js';
import { workerFile } from './worker-file.js';
import { RUN_TIMEOUT_MS, type RunResult } from './limits.js';
import type { WorkerTask } from './worker.js';

export interface FunctionRunnerOptions {
  /** Worker threads (default: 2, at most the machine's parallelism). */
  threads?: number;
  /** Runs that may wait for a worker beyond those running (default 64). Past it, runs fail at once. */
  maxQueue?: number;
  /** C11.4's limit (default 50 ms). */
  timeoutMs?: number;
  /** How long a run may wait for a worker before it fails (default: timeoutMs). */
  maxWaitMs?: number;
  /** Each worker's old-generation heap cap in MB (default 64, at least 32). */
  heapMb?: number;
}

export interface FunctionRunnerStats {
  threads: number;
  /** Workers loaded and serving (below `threads` while a replacement starts). */
  loaded: number;
  busy: number;
  waiting: number;
  runs: number;
  timeouts: number;
  saturated: number;
  /** Workers terminated (a run over its deadline) or dead (out of memory); piscina replaces each. */
  workersReplaced: number;
}

export interface FunctionRunner {
  run(request: RunRequest): Promise<RunResult>;
  /** Resolves when the first workers have loaded; `run` waits for it by itself. */
  ready(): Promise<void>;
  stats(): FunctionRunnerStats;
  close(): Promise<void>;
}

const NOT_STARTED_MS = 1000;

interface Waiting {
  run: PreparedRun;
  resolve: (result: RunResult) => void;
  timer: NodeJS.Timeout;
}

export function createFunctionRunner(options: FunctionRunnerOptions = {}): FunctionRunner {
  const threads = Math.max(1, Math.min(options.threads ?? 2, availableParallelism()));
  const maxQueue = Math.max(0, options.maxQueue ?? 64);
  const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS;
  const maxWaitMs = options.maxWaitMs ?? timeoutMs;
  // Below 32 MB a worker cannot load the evaluator and its warm-up reliably.
  const heapMb = Math.max(32, options.heapMb ?? 64);

  const pool = new Piscina<WorkerTask, RunResult>({
    filename: workerFile(),
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Infinity,
    // Not the parent's flags: under `node --import tsx` every worker would start tsx's loader
    // (its own hooks thread), several hundred ms per worker; the worker file needs no loader.
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(16, heapMb), stackSizeMb: 4 },
  });
  // A worker that dies with no task in hand is reported as an 'error' event; piscina has already
  // replaced it, and an unhandled 'error' would take the process down.
  pool.on('error', () => {});

  // Loaded workers: piscina announces a replacement once its module has loaded (workerCreate) and
  // a terminated or dead one at once (workerDestroy). It announces the first workers before they
  // have loaded, so those count only once a no-op run on each has come back (`warm`).
  // (The worker objects of these events are new each time: a worker is known by its thread id.)
  const workers = new Set<number>();
  let destroyed = 0;
  let warmedUp = false;
  pool.on('workerCreate', (w: { id: number }) => {
    workers.add(w.id);
    dispatch();
  });
  pool.on('workerDestroy', (w: { id: number }) => {
    if (workers.delete(w.id)) destroyed++;
  });
  const loaded = () => (warmedUp ? workers.size : 0);
  const warm = warmUp(pool, threads, timeoutMs).then(() => {
    warmedUp = true;
    dispatch();
  });

  const stats = { runs: 0, timeouts: 0, saturated: 0 };
  const queue: Waiting[] = [];
  let busy = 0;
  let closed = false;

  function dispatch(): void {
    while (queue.length > 0 && busy < loaded() && !closed) {
      const next = queue.shift()!;
      clearTimeout(next.timer);
      void execute(next.run).then(next.resolve);
    }
  }

  async function execute(run: PreparedRun): Promise<RunResult> {
    busy++;
    const startedAt = new SharedArrayBuffer(8);
    const slot = new BigInt64Array(startedAt);
    const sent = epochMicros();
    const controller = new AbortController();
    let ranMs: number | null = null;
    let neverStarted = false;
    let timer: NodeJS.Timeout | undefined;
    // Wakes at the earliest moment the run could be over its limit, and again if it started late.
    // A run a worker never starts (a worker that cannot load) is given up after a second.
    const watch = (delayMs: number) => {
      timer = setTimeout(() => {
        const start = Atomics.load(slot, 0);
        const now = epochMicros();
        if (start === 0n) {
          if (Number(now - sent) / 1000 >= NOT_STARTED_MS) {
            neverStarted = true;
            controller.abort();
          } else watch(timeoutMs);
          return;
        }
        const ran = Number(now - start) / 1000;
        if (ran >= timeoutMs) {
          ranMs = ran;
          controller.abort();
        } else watch(timeoutMs - ran);
      }, Math.max(1, Math.ceil(delayMs)));
    };
    watch(timeoutMs);
    try {
      return await pool.run({ run, timeoutMs, startedAt }, { signal: controller.signal });
    } catch (err) {
      if (ranMs !== null) {
        stats.timeouts++;
        const ms = Math.round(ranMs * 1000) / 1000;
        return failure('TimeoutError', `the run was stopped after ${ms} ms; the limit is ${timeoutMs} ms`, run.inputBytes, ms);
      }
      if (neverStarted) return failure('RuntimeError', `no worker started the run within ${NOT_STARTED_MS} ms`, run.inputBytes);
      return failure('RuntimeError', workerFailure(err), run.inputBytes, Math.round(Number(epochMicros() - sent) / 1000) / 1000);
    } finally {
      clearTimeout(timer);
      busy--;
      // After this run's continuation: a replacement is counted in by its own event.
      queueMicrotask(dispatch);
    }
  }

  async function run(request: RunRequest): Promise<RunResult> {
    const prepared = prepareRun(request);
    if (!isPrepared(prepared)) return prepared;
    const { inputBytes } = prepared;
    if (closed) return failure('RuntimeError', 'the function runner is closed', inputBytes);
    stats.runs++;
    if (queue.length === 0 && busy < loaded()) return execute(prepared);
    if (queue.length >= maxQueue) {
      stats.saturated++;
      return failure('TimeoutError', `not run: the function pool is saturated (${busy} running, ${queue.length} waiting)`, inputBytes);
    }
    return new Promise<RunResult>((resolve) => {
      const entry: Waiting = {
        run: prepared,
        resolve,
        // Waiting for the first workers to load is not the expression's fault, nor saturation.
        timer: setTimeout(function expire() {
          if (!warmedUp) {
            entry.timer = setTimeout(expire, maxWaitMs);
            return;
          }
          const at = queue.indexOf(entry);
          if (at === -1) return;
          queue.splice(at, 1);
          stats.saturated++;
          resolve(failure('TimeoutError', `not run: no worker was free within ${maxWaitMs} ms (the function pool is saturated)`, inputBytes));
        }, maxWaitMs),
      };
      queue.push(entry);
    });
  }

  return {
    run,
    ready: () => warm,
    stats: () => ({ threads, loaded: loaded(), busy, waiting: queue.length, ...stats, workersReplaced: destroyed }),
    async close() {
      closed = true;
      for (const w of queue.splice(0)) {
        clearTimeout(w.timer);
        w.resolve(failure('RuntimeError', 'the function runner is closed', w.run.inputBytes));
      }
      await pool.destroy();
    },
  };
}

async function warmUp(pool: Piscina<WorkerTask, RunResult>, threads: number, timeoutMs: number): Promise<void> {
  const run = { target: 'cart.validations.generate.run' as const, expression: WARM_UP_EXPRESSION, inputJson: '{}', configurationJson: '{}', inputBytes: 0 };
  const runs = Array.from({ length: threads }, () => pool.run({ run, timeoutMs, startedAt: new SharedArrayBuffer(8) }).catch(() => undefined));
  await Promise.all(runs);
}

const WARM_UP_EXPRESSION = '{"operations": []}';

function workerFailure(err: unknown): string {
  const code = (err as { code?: string })?.code;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') return 'the run exceeded the memory limit and was stopped';
  return `the run's worker failed: ${err instanceof Error ? err.message : String(err)}`;
}
