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
