// One run, in two halves: `prepareRun` (in the caller's thread: the input's size, which decides
// whether the run happens at all) and `executeRun` (in a pool worker, or in-process for
// `evaluateOnce`: compile with a cache, evaluate, back to JSON, size and shape of the output).
// Both the pool and `evaluateOnce` go through these two, so a local run gives the production result.
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { celToJson, compileFunction, isCelError, configurationProblem, messageOf, NotJsonError, type CompileResult } from './cel.js';
import {
  boundedErrorMessage, MAX_CONFIGURATION_BYTES, MAX_INPUT_BYTES, MAX_OUTPUT_BYTES, RUN_TIMEOUT_MS, utf8Bytes,
  type FunctionErrorType, type RunResult,
} from './limits.js';
import { Lru } from './lru.js';
import { isTarget, outputProblem, type FunctionTarget } from './targets.js';
import { storableText, unstorableTextAt } from './storable-text.js';

export interface RunRequest {
  target: string;
  expression: string;
  input: unknown;
  /**
   * `input` already as JSON text, when the caller has it (several functions of one target run on
   * the same input: it is serialised once). Must be JSON.stringify(input).
   */
  inputJson?: string;
  /** A JSON object, default `{}` (C11.1). */
  configuration?: unknown;
}

/** What crosses to a worker: JSON text (cheap to copy, and exactly what a JSON body would be). */
export interface PreparedRun {
  target: FunctionTarget;
  expression: string;
  inputJson: string;
  configurationJson: string;
  inputBytes: number;
  /**
   * Only compile (pool.ts `checkExpressions`: C11.1's check of a declared or tried expression, off
   * the main thread): the result is a success whose output is `{ problem }` (null when it compiles).
   */
  compileOnly?: boolean;
}

/**
 * A failed run: every failure of a run, in a worker, in the pool or in-process, is made here. Its
 * message may quote the expression's strings: bounded (C11.4's output is 20 KB, a message is at
 * most 1,000 characters like every error the service gives) and made storable, as the run is
 * recorded (C11.5).
 */
export function failure(errorType: FunctionErrorType, errorMessage: string, inputBytes: number, durationMs = 0, outputBytes = 0): RunResult {
  return { status: 'failure', errorType, errorMessage: storableText(boundedErrorMessage(errorMessage)), output: null, inputBytes, outputBytes, durationMs };
}

/** The checks made before a run is sent anywhere: a failed result, or the run to execute. */
export function prepareRun(request: RunRequest): RunResult | PreparedRun {
  let inputJson: string | undefined = request.inputJson;
  try {
    inputJson ??= JSON.stringify(request.input ?? null);
  } catch (err) {
    return failure('RuntimeError', `input is not JSON: ${messageOf(err)}`, 0);
  }
  if (inputJson === undefined) return failure('RuntimeError', 'input is not JSON', 0);
  const inputBytes = utf8Bytes(inputJson);
  if (inputBytes > MAX_INPUT_BYTES) {
    return failure('InputSizeLimitExceededError', `input is ${inputBytes} bytes; the maximum is ${MAX_INPUT_BYTES} (not run)`, inputBytes);
  }
  if (!isTarget(request.target)) return failure('RuntimeError', `unknown target "${String(request.target)}"`, inputBytes);
  if (typeof request.expression !== 'string') return failure('RuntimeError', 'expression must be a string', inputBytes);
  const configuration = request.configuration ?? {};
  const problem = configurationProblem(configuration);
  if (problem) {
    // A configuration over its 10 KB is an input over its limit too: not run.
    const tooLarge = utf8Bytes(safeStringify(configuration)) > MAX_CONFIGURATION_BYTES;
    return failure(tooLarge ? 'InputSizeLimitExceededError' : 'RuntimeError', `${problem} (not run)`, inputBytes);
  }
  return { target: request.target, expression: request.expression, inputJson, configurationJson: JSON.stringify(configuration), inputBytes };
}

export function isPrepared(value: RunResult | PreparedRun): value is PreparedRun {
  return 'inputJson' in value;
}

/**
 * Compiled programs by expression source; one cache per thread (each worker has its own). Bounded by
 * count and by memory: a program's size grows faster than its source (a `has()` of a path 1,000
 * deep is ~6 MB, 4,000 deep ~60 MB), and a worker's heap is 64 MB, so 256 kept programs of one
 * store's functions filled it and every later compile killed the worker, failing other stores' runs
 * (functions that each ran alone could not run together).
 */
let compiled = new Lru<string, CompileResult>(256);

/**
 * Share of the thread's heap limit past which the kept programs are dropped before a new compile:
 * the compile then has at least the rest of the heap, as it would in a fresh worker. Measured
 * heap use counts garbage not yet collected too, so this errs towards dropping (a recompile), never
 * towards keeping.
 */
const KEEP_BELOW_HEAP_SHARE = 0.4;

function heapNearlyFull(): boolean {
  const { used_heap_size: used, heap_size_limit: limit } = getHeapStatistics();
  return used > limit * KEEP_BELOW_HEAP_SHARE;
}

export function compileCached(expression: string): CompileResult {
  let result = compiled.get(expression);
  if (result === undefined) {
    if (compiled.size > 0 && heapNearlyFull()) compiled = new Lru(compiled.capacity);
    result = compileFunction(expression);
    compiled.set(expression, result);
  }
  return result;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * Compile (cached) and evaluate a prepared run; `durationMs` and the deadline count the evaluation
 * only. Synchronous: in a worker the main thread enforces the deadline by
 * terminating the worker; here a run that finishes late is still reported as TimeoutError, so a
 * local run and a production run fail the same way. `parsedInput`: the input's value when the
 * caller shares one parse between runs of the same input (its cost counts in the run that parses).
 */
export function executeRun(run: PreparedRun, timeoutMs = RUN_TIMEOUT_MS, parsedInput?: () => unknown): RunResult {
  const { inputBytes } = run;
  // Before the clock starts: the limit is the evaluation's (C11.4). A worker has compiled it
  // already, under its own budget (worker.ts); this is then the cache's answer.
  // A check's program is not kept: its answer must depend on the expression alone, not on what the
  // checking worker compiled before (and it is never run there).
  const program = run.compileOnly ? compileFunction(run.expression) : compileCached(run.expression);
  if (run.compileOnly) {
    return { status: 'success', errorType: null, errorMessage: null, output: { problem: program.ok ? null : program.problem }, inputBytes, outputBytes: 0, durationMs: 0 };
  }
  if (!program.ok) return failure('RuntimeError', program.problem, inputBytes);
  const started = performance.now();
  const elapsed = () => round(performance.now() - started);

  let value: unknown;
  try {
    value = program.evaluate({ input: parsedInput ? parsedInput() : JSON.parse(run.inputJson), configuration: JSON.parse(run.configurationJson) });
  } catch (err) {
    // Deep recursion and the like: CEL itself reports its errors as values.
    return failure('RuntimeError', messageOf(err), inputBytes, elapsed());
  }
  const late = () => {
    const ms = elapsed();
    return ms > timeoutMs ? failure('TimeoutError', `the run took ${ms} ms; the limit is ${timeoutMs} ms`, inputBytes, ms) : null;
  };
  if (isCelError(value)) return late() ?? failure('RuntimeError', messageOf(value), inputBytes, elapsed());

  let output: unknown;
  try {
    output = celToJson(value);
  } catch (err) {
    if (err instanceof NotJsonError) return late() ?? failure('InvalidOutputError', err.message, inputBytes, elapsed());
    return late() ?? failure('RuntimeError', messageOf(err), inputBytes, elapsed());
  }
  const outputJson = JSON.stringify(output);
  const outputBytes = utf8Bytes(outputJson);
  const tooLate = late();
  if (tooLate) return tooLate;
  if (outputBytes > MAX_OUTPUT_BYTES) {
    return failure('OutputTooLargeError', `output is ${outputBytes} bytes; the maximum is ${MAX_OUTPUT_BYTES}`, inputBytes, elapsed(), outputBytes);
  }
  const shape = outputProblem(run.target, output);
  if (shape) return failure('InvalidOutputError', shape, inputBytes, elapsed(), outputBytes);
  // A title or message the checkout and the run record could not store (storable-text.ts).
  const unstorable = unstorableTextAt(output, 'output');
  if (unstorable) return failure('InvalidOutputError', `${unstorable} must not contain NUL characters or unpaired UTF-16 surrogates`, inputBytes, elapsed(), outputBytes);
  return { status: 'success', errorType: null, errorMessage: null, output, inputBytes, outputBytes, durationMs: elapsed() };
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

const WARM_UP: RunRequest[] = [
  {
    target: 'cart.delivery-options.transform.run',
    expression: '{"operations": input.deliveryOptions.filter(o, double(o.price) > 1.0).map(o, {"rename": {"handle": o.handle, "title": o.title + "!"}}) + [{"move": {"handle": "a", "index": 0}}, {"hide": {"handle": "b"}}]}',
    input: { deliveryOptions: [{ handle: 'a', title: 'A', price: '2.00' }] },
  },
  {
    target: 'cart.payment-methods.transform.run',
    expression: '{"operations": input.paymentMethods.exists(m, m.handle == "cod") ? [{"hide": {"handle": "cod"}}] : []}',
    input: { paymentMethods: [{ handle: 'cod', title: 'Cash' }] },
  },
  {
    target: 'cart.validations.generate.run',
    expression: '{"operations": [{"validationAdd": {"errors": input.checkout.line_items.filter(l, l.quantity > configuration.max).map(l, {"message": "too many", "target": l.id})}}]}',
    input: { checkout: { line_items: [{ id: 'l1', quantity: 5 }] } },
    configuration: { max: 2 },
  },
  {
    target: 'cart.lines.discounts.generate.run',
    expression: '{"operations": [{"orderDiscountAdd": {"message": "m", "value": {"percentage": 10}}}, {"productDiscountAdd": {"message": "m", "lineIds": ["l1"], "value": {"fixedAmount": "1.00"}}}]}',
    input: { checkout: { line_items: [{ id: 'l1' }] } },
  },
];

let warmed = false;

/**
 * Run each target once, so the first real run is not charged for loading and JIT-compiling the
 * parser, the evaluator and the output validators (a cold first run takes tens of ms). Workers do
 * it as they start; `evaluateOnce` before its first run.
 */
export function warmUp(): void {
  warmed = true;
  for (const request of WARM_UP) {
    const prepared = prepareRun(request);
    if (isPrepared(prepared)) for (let i = 0; i < 3; i++) executeRun(prepared, Infinity);
  }
}

/** The whole run in this thread: the SDK's local runs and the tests. Never throws. */
export function evaluateOnce(request: RunRequest, options: { timeoutMs?: number } = {}): RunResult {
  if (!warmed) warmUp();
  const prepared = prepareRun(request);
  return isPrepared(prepared) ? executeRun(prepared, options.timeoutMs ?? RUN_TIMEOUT_MS) : prepared;
}
