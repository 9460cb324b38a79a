// What a function runner is, to its callers (the checkouts' pool, the developers' pool, tests):
// its options, its figures and its calls. How the pool of worker threads does it is pool.ts.
import type { RunRequest } from './evaluate.js';
import type { RunResult } from './limits.js';

export interface FunctionRunnerOptions {
  /** Worker threads (default: 2, at most the machine's parallelism). */
  threads?: number;
  /** Runs that may wait for a worker beyond those running (default 256: 32 checkouts of 8 functions). Past it, runs fail at once. */
  maxQueue?: number;
  /** C11.4's limit (default 50 ms). */
  timeoutMs?: number;
  /** How long compiling an expression may take, before its run's clock starts (default COMPILE_TIMEOUT_MS, 2 s; at least timeoutMs). */
  compileTimeoutMs?: number;
  /** How long a run may wait for a worker before it fails (default: timeoutMs). */
  maxWaitMs?: number;
  /** Each worker's old-generation heap cap in MB (default 64, at least 32). */
  heapMb?: number;
  /** Workers loaded beyond `threads`, standing in at once for one that is stopped (default 1). */
  spareThreads?: number;
  /**
   * The workers' scheduling priority (a nice value, 0-19; default 0, the process's): a pool that
   * must yield the CPU to another (the developers' runs to the checkouts', src/functions/developer-runs.ts)
   * runs its workers at a lower priority, from the moment each loads. Linux only (elsewhere ignored).
   */
  niceness?: number;
  /**
   * Runs gathered into one task at most (default MAX_TASK_RUNS). 1: every ask is a task of its own,
   * so one caller's runaway never sends another caller's run again (the developers' pool, whose
   * callers are strangers to each other and whose asks are single runs).
   */
  maxTaskRuns?: number;
}

export interface FunctionRunnerStats {
  threads: number;
  /** Workers loaded and serving (below `threads` while a replacement starts). */
  loaded: number;
  busy: number;
  waiting: number;
  runs: number;
  /** Tasks sent to workers: runs / tasks is how many runs a worker's wake-up served (gathered asks, pool.ts). */
  tasks: number;
  timeouts: number;
  saturated: number;
  /** Workers terminated (a run over its deadline) or dead (out of memory); piscina replaces each. */
  workersReplaced: number;
}

export interface FunctionRunner {
  run(request: RunRequest): Promise<RunResult>;
  /**
   * Several runs at once (a checkout target's active functions, C11.4), results in the same order.
   * They go to one worker as one task, each input sent and parsed once, each run still held to its
   * own deadline: one message to a worker and one back, rather than one pair per run.
   */
  runAll(requests: readonly RunRequest[]): Promise<RunResult[]>;
  /**
   * C11.1's check of expressions (parse, names, plan), in a worker: each one's problem, a sentence
   * as `compileFunction` gives it, or null when it compiles. A compile past the compile budget is a
   * problem too (`expression could not be compiled: ...`). Throws when the pool could not take the
   * checks (saturated or closed): no answer about the expressions. Not counted as runs.
   */
  checkExpressions(expressions: readonly unknown[]): Promise<(string | null)[]>;
  /** Resolves when the first workers have loaded; `run` waits for it by itself. */
  ready(): Promise<void>;
  stats(): FunctionRunnerStats;
  close(): Promise<void>;
}
