// Developers' runs (C11.7: trying an expression, replaying a recorded run) run in a pool of their
// own, never in the checkouts' (`deps.functions`): any partner can create an app and call these
// routes, and when they shared the checkouts' two workers a few parallel loops of a runaway
// expression kept both busy, every store's checkout functions failed as saturated, and C11.4 ("a
// failed run's operations are dropped and the checkout goes on") let checkouts skip their
// validations and discounts. Now:
//
// - The developers' pool is one worker thread, no spare, started on first use, at a lower CPU
//   priority (nice 10) than the checkouts' workers and the event loop: its load can slow a
//   developer's answer, never a checkout's run. Same limits as a checkout's runs (C11.4).
// - Each app has at most DEVELOPER_RUNS_IN_FLIGHT runs running or waiting at once in a process, and
//   DEVELOPER_RUNS_PER_MINUTE a minute (the shared attempt counters, as the shipping rate tests);
//   past either -> 429 with Retry-After. The pool holds at most DEVELOPER_POOL_RUNS runs of all apps
//   (one running, the rest waiting); past it -> 503 with Retry-After. So one developer's loops take
//   at most two places of the pool's nine, and the pool itself never refuses a run it was given.
// - Each run is a task of its own (not gathered with others, as a checkout's are): another
//   developer's runaway never stops it; it runs, or fails as saturated after waiting 2 s.
// - Compiling an expression a developer tries is work of that pool too (`check`), done once the run
//   has its places, never in the event loop (a 10,000-character expression takes up to hundreds of ms).
// - Declared functions (app create and PATCH, C11.1) are compiled in a worker of their own at the same
//   priority (`checkDeclaredExpressions`): the manifest's reader has no `deps`, and 100 expressions
//   of 10,000 characters compiled in the event loop froze every request of the service for seconds.
import type { Deps } from '../deps.js';
import { throttled, unavailable } from '../http/errors.js';
import { countPerMinute } from '../ratelimit/per-minute.js';
import { lazyFunctionRunner } from './function-runner.js';
import { NotCheckedError, type FunctionRunner, type FunctionRunnerStats, type RunRequest, type RunResult } from './runtime/index.js';

/** Runs of one app running or waiting at once (in a process); one more -> 429. */
export const DEVELOPER_RUNS_IN_FLIGHT = 2;
/** Runs one app may ask for per minute of the service clock, trying and replaying together; more -> 429. */
export const DEVELOPER_RUNS_PER_MINUTE = 60;
/** Worker threads of the developers' pool. */
const DEVELOPER_THREADS = 1;
/** Runs of all apps the developers' pool holds at once, running or waiting; one more -> 503. */
export const DEVELOPER_POOL_RUNS = 9;
/** How long a developer's run may wait for the worker (a runaway ahead of it costs its deadline and a worker's reload). */
const DEVELOPER_MAX_WAIT_MS = 2000;
/** The developers' worker's nice value (Linux): the checkouts' workers and the event loop go first. */
const DEVELOPER_NICENESS = 10;
/** What a refusal for a full place asks the caller to wait: a run ends within its deadline. */
const RETRY_AFTER_SECONDS = 1;

export interface DeveloperFunctionRunner {
  /** Takes one of the app's places and one of the pool's until the returned release; throws 429 or 503 when there is none. */
  admit(appId: string): () => void;
  run(request: RunRequest): Promise<RunResult>;
  /** The expression's compile problem, or null, compiled in the developers' worker (pool.ts `checkExpressions`). */
  check(expression: unknown): Promise<string | null>;
  /** The developers' pool (svc_developer_function_pool). */
  stats(): FunctionRunnerStats;
  close(): Promise<void>;
}

export function developerFunctionRunner(options: { timeoutMs?: number } = {}): DeveloperFunctionRunner {
  const runner = lazyFunctionRunner({
    threads: DEVELOPER_THREADS,
    spareThreads: 0,
    // The admission below is the bound: the pool never refuses a run it was given.
    maxQueue: DEVELOPER_POOL_RUNS,
    maxWaitMs: Math.max(DEVELOPER_MAX_WAIT_MS, options.timeoutMs ?? 0),
    niceness: DEVELOPER_NICENESS,
    // Each developer's run a task of its own: another's runaway never stops it (pool.ts).
    maxTaskRuns: 1,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  const perApp = new Map<string, number>();
  let total = 0;
  return {
    admit(appId) {
      const mine = perApp.get(appId) ?? 0;
      if (mine >= DEVELOPER_RUNS_IN_FLIGHT) {
        throw throttled(`At most ${DEVELOPER_RUNS_IN_FLIGHT} function runs (trying and replaying) at once per app: wait for one to finish`, RETRY_AFTER_SECONDS);
      }
      if (total >= DEVELOPER_POOL_RUNS) {
        // The 503's Retry-After is the error handler's (1 s, as every `unavailable`).
        throw unavailable("Developers' function runs are busy; try again shortly");
      }
      perApp.set(appId, mine + 1);
      total++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total--;
        const left = (perApp.get(appId) ?? 1) - 1;
        if (left > 0) perApp.set(appId, left);
        else perApp.delete(appId);
      };
    },
    run: (request) => runner.run(request),
    check: async (expression) => {
      try {
        return (await runner.checkExpressions([expression]))[0];
      } catch (err) {
        // No worker was free in time: the try is answered as a run that found none (function-try.ts).
        if (err instanceof NotCheckedError) throw err;
        throw unavailable("Developers' function runs are busy; try again shortly");
      }
    },
    stats: () => runner.stats(),
    close: () => runner.close(),
  };
}

/** Counts the run against the app's minute; open when the counters are down (logged): the places still bound it. */
const countRun = (deps: Deps, appId: string) =>
  countPerMinute(deps, {
    key: `function-run:${appId}`,
    limit: DEVELOPER_RUNS_PER_MINUTE,
    refusal: `At most ${DEVELOPER_RUNS_PER_MINUTE} function runs (trying and replaying) a minute per app`,
    whenDown: 'open',
    downLog: 'function run counter unavailable',
  });

/**
 * One developer run of the app (C11.7), in the developers' pool, within the app's places and minute.
 * `check`: the request's checks that cost work (compiling its expression), made once the run holds
 * its places (so they are bounded as runs are) and before it counts against the minute (a 400 is no run).
 */
export async function runForDeveloper(deps: Deps, appId: string, request: RunRequest, check?: () => Promise<void>): Promise<RunResult> {
  const release = deps.developerFunctions.admit(appId);
  try {
    try {
      await check?.();
    } catch (err) {
      // No worker was free to check it: answered and counted as a run that found no worker is
      // (200, "not run"), not as the pool's 503, which is for a pool with no place to take it.
      if (!(err instanceof NotCheckedError)) throw err;
      await countRun(deps, appId);
      return err.result;
    }
    await countRun(deps, appId);
    return await deps.developerFunctions.run(request);
  } finally {
    release();
  }
}

/** Expressions of declared functions waiting for the declarations' worker, of all apps; past it -> 503. */
const DECLARATION_CHECKS_WAITING = 4 * 100;
/** How long a manifest's checks may wait for the declarations' worker (another manifest's ahead). */
const DECLARATION_CHECKS_MAX_WAIT_MS = 30_000;

let declarationChecks: FunctionRunner | null = null;

/**
 * C11.1's compile of declared functions' expressions, in one worker thread at the developers'
 * priority, started on first use and idle otherwise (piscina unrefs an idle worker: it never keeps
 * the process up). Throws 503 when it cannot take them (its queue full, or waited too long).
 */
export async function checkDeclaredExpressions(expressions: readonly unknown[]): Promise<(string | null)[]> {
  declarationChecks ??= lazyFunctionRunner({
    threads: DEVELOPER_THREADS,
    spareThreads: 0,
    maxQueue: DECLARATION_CHECKS_WAITING,
    maxWaitMs: DECLARATION_CHECKS_MAX_WAIT_MS,
    niceness: DEVELOPER_NICENESS,
    maxTaskRuns: 1,
  });
  try {
    return await declarationChecks.checkExpressions(expressions);
  } catch {
    throw unavailable('Function declarations are being checked for other apps; try again shortly');
  }
}
