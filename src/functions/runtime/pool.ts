// The sandbox: runs are evaluated in a small pool of worker threads (piscina), because CEL always
// terminates but can take very long (nested comprehensions over a big list), and evaluation in the
// main thread could not be interrupted.
//
// - Each worker has heap caps (`resourceLimits`): an expression that allocates without bound kills
//   its worker, not the service.
// - The deadline is enforced from the main thread with a timer (the event loop never waits): when a
//   run has been executing for `timeoutMs` its AbortSignal fires, piscina terminates the worker that
//   runs it and starts a replacement (minThreads), and the run fails with TimeoutError. The deadline
//   counts from when the worker starts the run (it writes the start into a shared slot), so time
//   spent queued is not charged to the expression.
// - Waiting is bounded twice: at most `threads + maxQueue` runs in flight (piscina's own maxQueue
//   does not count tasks that carry an AbortSignal), and a queued run that has not started after
//   `maxWaitMs` is withdrawn. Either way the run fails at once with TimeoutError (C11.4's list has
//   no "busy" kind; for the checkout a saturated pool is a function that did not answer in time),
//   with a message that says the pool was saturated, not the expression slow. It never throws.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { epochMicros } from './clock.js';
import { failure, isPrepared, prepareRun, type RunRequest } from './evaluate.js';
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
  /** Each worker's old-generation heap cap in MB (default 64). */
  heapMb?: number;
}

export interface FunctionRunnerStats {
  threads: number;
  inFlight: number;
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

const WORKER_FILE = new URL('./worker-entry.mjs', import.meta.url);

type AbortReason = { kind: 'timeout'; ms: number } | { kind: 'waited'; ms: number };

export function createFunctionRunner(options: FunctionRunnerOptions = {}): FunctionRunner {
  const threads = Math.max(1, Math.min(options.threads ?? 2, availableParallelism()));
  const maxQueue = Math.max(0, options.maxQueue ?? 64);
  const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS;
  const maxWaitMs = options.maxWaitMs ?? timeoutMs;
  const heapMb = options.heapMb ?? 64;

  const pool = new Piscina<WorkerTask, RunResult>({
    filename: WORKER_FILE.href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Infinity,
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(16, heapMb), stackSizeMb: 4 },
  });
  // A worker that dies with no task in hand is reported as an 'error' event; piscina has already
  // replaced it, and an unhandled 'error' would take the process down.
  pool.on('error', () => {});
  let destroyed = 0;
  pool.on('workerDestroy', () => { destroyed++; });

  // piscina treats the first workers as ready before their module has loaded (replacements
  // announce themselves once loaded); a run aborted while "posted" to such a worker would kill it.
  // So each first worker gets a no-op run, and runs wait for those, once, before they are sent;
  // that wait is not charged to the run.
  const warm = warmUp(pool, threads, timeoutMs);
  let ready = false;
  void warm.then(() => { ready = true; });

  const stats = { runs: 0, timeouts: 0, saturated: 0 };
  let inFlight = 0;
  let closed = false;

  async function run(request: RunRequest): Promise<RunResult> {
    const prepared = prepareRun(request);
    if (!isPrepared(prepared)) return prepared;
    const { inputBytes } = prepared;
    if (closed) return failure('RuntimeError', 'the function runner is closed', inputBytes);
    if (inFlight >= threads + maxQueue) {
      stats.saturated++;
      return failure('TimeoutError', `not run: the function pool is saturated (${inFlight} runs in flight, ${threads} workers)`, inputBytes);
    }

    inFlight++;
    stats.runs++;
    if (!ready) await warm;
    const startedAt = new SharedArrayBuffer(8);
    const slot = new BigInt64Array(startedAt);
    const submitted = epochMicros();
    const controller = new AbortController();
    let reason: AbortReason | null = null;
    let timer: NodeJS.Timeout | undefined;

    // Wakes at the earliest moment the run could be over its limit, and again if it started late.
    const watch = (delayMs: number) => {
      timer = setTimeout(() => {
        const now = epochMicros();
        const start = Atomics.load(slot, 0);
        if (start === 0n) {
          const waited = Number(now - submitted) / 1000;
          if (waited >= maxWaitMs) {
            reason = { kind: 'waited', ms: waited };
            controller.abort(reason);
          } else watch(maxWaitMs - waited);
          return;
        }
        const ran = Number(now - start) / 1000;
        if (ran >= timeoutMs) {
          reason = { kind: 'timeout', ms: ran };
          controller.abort(reason);
        } else watch(timeoutMs - ran);
      }, Math.max(1, Math.ceil(delayMs)));
    };
    watch(Math.min(timeoutMs, maxWaitMs));

    try {
      return await pool.run({ run: prepared, timeoutMs, startedAt }, { signal: controller.signal });
    } catch (err) {
      const r = reason as AbortReason | null;
      if (r?.kind === 'timeout') {
        stats.timeouts++;
        const ms = Math.round(r.ms * 1000) / 1000;
        return failure('TimeoutError', `the run was stopped after ${ms} ms; the limit is ${timeoutMs} ms`, inputBytes, ms);
      }
      if (r?.kind === 'waited') {
        stats.saturated++;
        return failure('TimeoutError', `not run: no worker was free within ${maxWaitMs} ms (the function pool is saturated)`, inputBytes);
      }
      return failure('RuntimeError', workerFailure(err), inputBytes, Math.round(Number(epochMicros() - submitted) / 1000) / 1000);
    } finally {
      clearTimeout(timer);
      inFlight--;
    }
  }

  return {
    run,
    ready: () => warm,
    stats: () => ({ threads, inFlight, ...stats, workersReplaced: destroyed }),
    async close() {
      closed = true;
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
