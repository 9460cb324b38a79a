// The limits of contract C11.1 and C11.4, in one place so the service and the app SDK agree.

/** C11.1: an expression's source, in characters (Unicode code points). */
export const MAX_EXPRESSION_CHARS = 10_000;
/** C11.1: a function's configuration, as UTF-8 JSON bytes. */
export const MAX_CONFIGURATION_BYTES = 10 * 1024;
/** C11.4: a run's input, as UTF-8 JSON bytes; a bigger input is not run. */
export const MAX_INPUT_BYTES = 128 * 1024;
/** C11.4: a run's output, as UTF-8 JSON bytes. */
export const MAX_OUTPUT_BYTES = 20 * 1024;
/** C11.4: a run that takes longer is stopped and fails with `TimeoutError`. */
export const RUN_TIMEOUT_MS = 50;
/**
 * Compiling an expression, before its run's clock starts (C11.4's 50 ms is the evaluation's): a
 * 10,000-character expression C11.1 accepts can take over 50 ms to parse and plan on a slow
 * machine, and held to the run's deadline it was stopped mid-compile every time (its worker's
 * cache died with it) and never ran. A compile past this is stopped, and the run fails
 * (RuntimeError), rather than hold a worker. Ten seconds: a compile is bounded by the 10,000
 * characters (it cannot loop), so the budget only guards against a pathological parse, and it must
 * not refuse a valid expression on a busy machine: a 9,000-character expression took 500-830 ms
 * at load average 8 and over 2 s at load average 10 (2-core VM), which a 2 s budget refused.
 */
export const COMPILE_TIMEOUT_MS = 10_000;

/**
 * A run's error message, in characters: the service's bound on every error message
 * (src/http/shapes.ts MAX_ERROR_MESSAGE_CHARS, docs/decisions.md). CEL's messages quote values
 * (`field not found: <key>`), and a key built from a 10 KB configuration string ran to megabytes,
 * stored with each run and returned by the logs, runs, try and replay routes.
 */
export const MAX_ERROR_MESSAGE_CHARS = 1000;

/** The run's failure kinds of C11.4. */
export const ERROR_TYPES = [
  'InputSizeLimitExceededError',
  'RuntimeError',
  'InvalidOutputError',
  'OutputTooLargeError',
  'TimeoutError',
] as const;
export type FunctionErrorType = (typeof ERROR_TYPES)[number];

/** What one run gives back (C11.4, and the run record's fields of C11.5). */
export interface RunResult {
  status: 'success' | 'failure';
  errorType: FunctionErrorType | null;
  errorMessage: string | null;
  /** The output as plain JSON on success; null on failure (a failed run's operations are dropped). */
  output: unknown | null;
  inputBytes: number;
  /** The output's JSON size when there was an output to measure, else 0. */
  outputBytes: number;
  durationMs: number;
}

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * The message within MAX_ERROR_MESSAGE_CHARS, cut as src/http/shapes.ts `boundedMessage` cuts (never
 * inside a surrogate pair, with how much was left off). Its own copy: this runtime imports nothing
 * from the rest of the service (the app SDK ships it); test/function-review-fixes.test.ts holds the
 * two to the same result.
 */
export function boundedErrorMessage(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  let end = MAX_ERROR_MESSAGE_CHARS;
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${message.slice(0, end)}... (${message.length - end} more characters)`;
}
