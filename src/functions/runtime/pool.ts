// The sandbox: runs are evaluated in a small pool of worker threads (piscina), because CEL always
// terminates but can take very long (nested comprehensions over a big list), and evaluation in the
// main thread could not be interrupted.
//
// - Each worker has heap caps (`resourceLimits`): an expression that allocates without bound kills
//   its worker, not the service.
// - Each run's deadline and compile budget are held from the main thread, one task at a time, by
//   task-watchdog.ts; this module queues the runs and hands them to the workers as tasks.
// - A spare worker stays loaded, so a stopped worker's place is taken at once (SPARE_THREADS).
// - Runs asked together (`runAll`: a checkout target's functions), and all the asks of one turn of
//   the event loop (checkouts quoted at once), go to one worker as one task of at most
//   MAX_TASK_RUNS runs: one message each way instead of one pair per run, each input sent and
//   parsed once. Each run keeps its own deadline (the worker marks each run's start and end); when
//   one overruns, it alone fails, and the task's other runs are sent again (CEL is deterministic: a
//   finished run gives the same result twice) without it.
// - The queue is ours, not piscina's: a task goes to piscina only when a loaded worker can take it
//   (run it, or hold it next), so it never waits in piscina's queue, where withdrawing it could cost
//   a worker (piscina terminates the worker a task was posted to) and where its maxQueue does not
//   count tasks that carry a signal.
//   At most `maxQueue` runs wait, each at most `maxWaitMs`. A run refused for a full queue, or
//   withdrawn after waiting, fails at once with TimeoutError: C11.4's list has no "busy" kind, and
//   for the checkout a saturated pool is a function that did not answer in time; the message says
//   the pool was saturated, not that the expression was slow. `run` never throws.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { SLOTS_PER_RUN } from './clock.js';
import { expressionShapeProblem } from './cel.js';
import { compileOnly, compileProblem, knownCompiles } from './compile-check.js';
import { failure, isPrepared, prepareRun, type PreparedRun, type RunRequest } from './evaluate.js';
import { workerFile } from './worker-file.js';
import { COMPILE_TIMEOUT_MS, RUN_TIMEOUT_MS, type RunResult } from './limits.js';
import type { TaskRun, WorkerTask } from './worker.js';
import type { WorkerSetup } from './worker-priority.js';
import type { FunctionRunner, FunctionRunnerOptions } from './runner-types.js';
import { NOT_STARTED_MS, watchTask, type Outcome } from './task-watchdog.js';

export type { FunctionRunner, FunctionRunnerOptions, FunctionRunnerStats } from './runner-types.js';

/**
 * A worker is given a task only when it is free: every waiting task stays in the queue, free to go
 * to whichever worker frees first. (Handing each worker its next task too, in its port, was
 * measured: a task held behind a runaway waited out the runaway's 50 ms and had to be sent again;
 * the p99 of the other runs under 1 % runaways went from ~50 ms to ~350 ms, for no gain in
 * checkout throughput.)
 */
/**
 * Workers kept loaded beyond `threads` by default, idle until one of the others is stopped: a
 * replacement takes 130-300 ms to load on a small machine, and without a spare the pool runs on one
 * worker fewer all that time, so a second runaway then leaves no worker free and runs waiting
 * behind it fail as saturated (measured: 20-95 of 1,980 at 200 runs/s with 1 % runaways).
 */
const SPARE_THREADS = 1;

/** Runs in one task at most, of asks gathered together (an ask's runs always travel together). */
const MAX_TASK_RUNS = 32;

/** Passes of a lone run whose worker was lost before it took the run up (`settle`). */
const MAX_PASSES = 4;

/** One caller's runs (a `runAll`), waiting to be gathered into a task with the others of its turn. */
interface Ask {
  runs: PreparedRun[];
  resolve: (results: RunResult[]) => void;
}

/** Runs waiting for a worker, as one task. */
interface Waiting {
  runs: PreparedRun[];
  resolve: (results: Outcome[]) => void;
  timer: NodeJS.Timeout;
}

export function createFunctionRunner(options: FunctionRunnerOptions = {}): FunctionRunner {
  const threads = Math.max(1, Math.min(options.threads ?? 2, availableParallelism()));
  const maxQueue = Math.max(0, options.maxQueue ?? 256);
  const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS;
  const compileTimeoutMs = Math.max(timeoutMs, options.compileTimeoutMs ?? COMPILE_TIMEOUT_MS);
  const maxWaitMs = options.maxWaitMs ?? timeoutMs;
  // Below 32 MB a worker cannot load the evaluator and its warm-up reliably.
  const heapMb = Math.max(32, options.heapMb ?? 64);
  const spare = Math.max(0, Math.round(options.spareThreads ?? SPARE_THREADS));
  const niceness = Math.max(0, Math.min(19, Math.round(options.niceness ?? 0)));
  // A niced pool's workers may wait their turn for the CPU before they start a run (task-watchdog.ts).
  const notStartedMs = niceness > 0 ? Math.max(NOT_STARTED_MS, compileTimeoutMs) : NOT_STARTED_MS;
  const maxTaskRuns = Math.max(1, Math.round(options.maxTaskRuns ?? MAX_TASK_RUNS));

  const pool = new Piscina<WorkerTask, RunResult[]>({
    filename: workerFile(),
    minThreads: threads + spare,
    maxThreads: threads + spare,
    idleTimeout: Infinity,
    // Not the parent's flags: under `node --import tsx` every worker would start tsx's loader
    // (its own hooks thread), several hundred ms per worker; the worker file needs no loader.
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(16, heapMb), stackSizeMb: 4 },
    // Read by each worker first thing as it loads (worker-priority.ts): a replacement loads at the
    // pool's priority too. (Not piscina's niceIncrement, which needs an optional native module.)
    workerData: { niceness } satisfies WorkerSetup,
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
  /** Tasks that may be in piscina at once: one per worker, `threads` at most, whatever the spares. */
  const capacity = () => Math.min(loaded(), threads);
  const warm = warmUp(pool, threads + spare, timeoutMs).then(() => {
    warmedUp = true;
    dispatch();
  });

  const stats = { runs: 0, tasks: 0, timeouts: 0, saturated: 0 };
  const queue: Waiting[] = [];
  /** Runs in `queue` (the bound counts runs, not tasks). */
  let waiting = 0;
  let busy = 0;
  let closed = false;

  function dispatch(): void {
    while (queue.length > 0 && busy < capacity() && !closed) {
      const next = queue.shift()!;
      waiting -= next.runs.length;
      clearTimeout(next.timer);
      void execute(next.runs).then(next.resolve);
    }
  }

  async function execute(runs: PreparedRun[]): Promise<Outcome[]> {
    busy++;
    stats.tasks++;
    const watch = watchTask(runs, { timeoutMs, compileTimeoutMs, notStartedMs });
    try {
      return await pool.run(taskOf(runs, timeoutMs, watch.progress), { signal: watch.signal });
    } catch (err) {
      const outcomes = watch.failed(err);
      if (watch.timedOut()) stats.timeouts++;
      return outcomes;
    } finally {
      watch.stop();
      busy--;
      // After this task's continuation: a replacement is counted in by its own event.
      queueMicrotask(dispatch);
    }
  }

  /**
   * The runs as one task, now or after a wait; each run's outcome in order. `again`: runs sent
   * again through no fault of their own (a sibling overran or its worker died): first in line, never
   * refused, and given the compile budget to wait rather than `maxWaitMs` (they wait only behind
   * other runs sent again, each of which ends within its compile budget and deadline; failing one
   * as saturated would fail it for its sibling after all).
   */
  function submit(runs: PreparedRun[], again = false): Promise<Outcome[]> {
    if (closed) return Promise.resolve(runs.map((run) => failure('RuntimeError', 'the function runner is closed', run.inputBytes)));
    if (queue.length === 0 && busy < capacity()) return execute(runs);
    if (!again && waiting + runs.length > maxQueue) {
      stats.saturated += runs.length;
      return Promise.resolve(runs.map((run) => failure('TimeoutError', `not run: the function pool is saturated (${busy} running, ${waiting} waiting)`, run.inputBytes)));
    }
    const waitMs = again ? Math.max(maxWaitMs, compileTimeoutMs) : maxWaitMs;
    return new Promise<Outcome[]>((resolve) => {
      const entry: Waiting = {
        runs,
        resolve,
        // Waiting for the first workers to load is not the expression's fault, nor saturation.
        timer: setTimeout(function expire() {
          if (!warmedUp) {
            entry.timer = setTimeout(expire, waitMs);
            return;
          }
          const at = queue.indexOf(entry);
          if (at === -1) return;
          queue.splice(at, 1);
          waiting -= runs.length;
          stats.saturated += runs.length;
          resolve(runs.map((run) => failure('TimeoutError', `not run: no worker was free within ${waitMs} ms (the function pool is saturated)`, run.inputBytes)));
        }, waitMs),
      };
      if (again) queue.unshift(entry);
      else queue.push(entry);
      waiting += runs.length;
    });
  }

  /**
   * Submits the runs, and again those left without a result. A run is failed only for what it did
   * itself (overran its deadline, or killed a worker it had to itself): after a task's worker is
   * stopped, the runs left go again together once when the one that overran was found (the usual
   * single runaway costs one more task), and otherwise (a second runaway, or a worker out of memory)
   * each alone. A lone run is sent again only when its worker was lost before taking it up, at most
   * MAX_PASSES times. (The runs left once went again together until MAX_PASSES and were then failed:
   * four heavy runs of one store failed the other stores' runs gathered with them.)
   */
  async function settle(runs: PreparedRun[], pass = 1, again = false): Promise<RunResult[]> {
    const outcomes = await submit(runs, again);
    const left = outcomes.flatMap((o, i) => (o === null ? [i] : []));
    if (!left.length) return outcomes as RunResult[];
    if (runs.length === 1) {
      outcomes[0] = pass >= MAX_PASSES
        ? failure('RuntimeError', `not run: ${pass} workers were lost before they took it up`, runs[0].inputBytes)
        : (await settle(runs, pass + 1, true))[0];
      return outcomes as RunResult[];
    }
    const overranFound = left.length < runs.length;
    const retried = overranFound && pass === 1
      ? await settle(left.map((i) => runs[i]), pass + 1, true)
      : (await Promise.all(left.map((i) => settle([runs[i]], 1, true)))).flat();
    left.forEach((i, j) => (outcomes[i] = retried[j]));
    return outcomes as RunResult[];
  }

  /**
   * Runs asked for in the same turn of the event loop (the checkouts being quoted at once), gathered
   * into tasks of whole asks, at most MAX_TASK_RUNS runs each: one message to a worker and one back
   * for them all (a worker's wake-up and the messages cost more than the runs of a typical
   * checkout; measured: about a third of the CPU per checkout at four checkouts a task).
   */
  let gathered: Ask[] = [];

  function gather(runs: PreparedRun[]): Promise<RunResult[]> {
    return new Promise((resolve) => {
      if (!gathered.length) setImmediate(sendGathered);
      gathered.push({ runs, resolve });
    });
  }

  function sendGathered(): void {
    const asks = gathered;
    gathered = [];
    let task: Ask[] = [];
    let taskRuns = 0;
    for (const ask of asks) {
      if (task.length && taskRuns + ask.runs.length > maxTaskRuns) {
        sendTask(task);
        task = [];
        taskRuns = 0;
      }
      task.push(ask);
      taskRuns += ask.runs.length;
    }
    if (task.length) sendTask(task);
  }

  function sendTask(asks: Ask[]): void {
    const runs = asks.flatMap((a) => a.runs);
    void settle(runs)
      .catch((err) => runs.map((run) => failure('RuntimeError', `the run's worker failed: ${err instanceof Error ? err.message : String(err)}`, run.inputBytes)))
      .then((results) => {
        let at = 0;
        for (const ask of asks) {
          ask.resolve(results.slice(at, at + ask.runs.length));
          at += ask.runs.length;
        }
      });
  }

  async function runAll(requests: readonly RunRequest[]): Promise<RunResult[]> {
    const results: RunResult[] = new Array(requests.length);
    const prepared: { at: number; run: PreparedRun }[] = [];
    requests.forEach((request, at) => {
      const p = prepareRun(request);
      if (isPrepared(p)) prepared.push({ at, run: p });
      else results[at] = p;
    });
    if (prepared.length) {
      if (!closed) stats.runs += prepared.length;
      const settled = await gather(prepared.map((p) => p.run));
      prepared.forEach((p, i) => (results[p.at] = settled[i]));
    }
    return results;
  }

  async function checkExpressions(expressions: readonly unknown[]): Promise<(string | null)[]> {
    const problems = expressions.map(expressionShapeProblem);
    const known = (expression: unknown) => knownCompiles.get(expression as string);
    const sent = expressions.flatMap((expression, at) =>
      problems[at] === null && known(expression) === undefined ? [{ at, expression: expression as string, run: compileOnly(expression as string) }] : []);
    expressions.forEach((expression, at) => {
      if (problems[at] === null && known(expression) !== undefined) problems[at] = known(expression)!;
    });
    if (sent.length) {
      const results = await gather(sent.map((s) => s.run));
      sent.forEach((s, i) => {
        problems[s.at] = compileProblem(results[i]);
        if (results[i].status === 'success') knownCompiles.set(s.expression, problems[s.at]);
      });
    }
    return problems;
  }

  return {
    run: async (request) => (await runAll([request]))[0],
    runAll,
    checkExpressions,
    ready: () => warm,
    stats: () => ({ threads, loaded: loaded(), busy, waiting, ...stats, workersReplaced: destroyed }),
    async close() {
      closed = true;
      for (const w of queue.splice(0)) {
        clearTimeout(w.timer);
        w.resolve(w.runs.map((run) => failure('RuntimeError', 'the function runner is closed', run.inputBytes)));
      }
      waiting = 0;
      await pool.destroy();
    },
  };
}

/** The runs as a worker task: each distinct input text once. */
function taskOf(runs: readonly PreparedRun[], timeoutMs: number, progress: SharedArrayBuffer): WorkerTask {
  const inputs: string[] = [];
  const indexOf = new Map<string, number>();
  const taskRuns = runs.map(({ inputJson, ...run }): TaskRun => {
    let input = indexOf.get(inputJson);
    if (input === undefined) {
      input = inputs.push(inputJson) - 1;
      indexOf.set(inputJson, input);
    }
    return { ...run, input };
  });
  return { inputs, runs: taskRuns, timeoutMs, progress };
}

async function warmUp(pool: Piscina<WorkerTask, RunResult[]>, threads: number, timeoutMs: number): Promise<void> {
  const run = { target: 'cart.validations.generate.run' as const, expression: WARM_UP_EXPRESSION, inputJson: '{}', configurationJson: '{}', inputBytes: 0 };
  const runs = Array.from({ length: threads }, () => pool.run(taskOf([run], timeoutMs, new SharedArrayBuffer(8 * SLOTS_PER_RUN))).catch(() => undefined));
  await Promise.all(runs);
}

const WARM_UP_EXPRESSION = '{"operations": []}';
