// C11.1's check of an expression in a pool worker (pool.ts `checkExpressions`): a run that only
// compiles (evaluate.ts `compileOnly`), so it is queued, sent and held to the compile budget as any
// run, and its answer read back as the expression's problem.
import type { PreparedRun } from './evaluate.js';
import type { RunResult } from './limits.js';
import { Lru } from './lru.js';

/** A check of the expression as a run that only compiles (evaluate.ts `compileOnly`), held to the compile budget. */
export const compileOnly = (expression: string): PreparedRun => ({
  target: 'cart.validations.generate.run', expression, inputJson: 'null', configurationJson: '{}', inputBytes: 0, compileOnly: true,
});

/**
 * A compile-only run's answer: the expression's problem or null. Stopped past the compile budget,
 * or out of memory, it is the expression's; refused or lost by the pool, there is no answer.
 */
export function compileProblem(result: RunResult): string | null {
  if (result.status === 'success') return (result.output as { problem: string | null }).problem;
  const message = result.errorMessage ?? '';
  if (result.errorType === 'RuntimeError' && /^(the expression was still compiling|the run exceeded the memory limit)/.test(message)) {
    return `expression could not be compiled: ${message.replace(/^the run /, 'the compile ')}`;
  }
  throw new NotCheckedError(result);
}

/**
 * The pool gave no answer about the expression (no worker was free in time, or the pool is closed):
 * `result` is the run's failure as the pool reported it. A developer's try answers with it as a run
 * that found no worker is answered (C11.7: 200, "not run"); a manifest's check is a 503.
 */
export class NotCheckedError extends Error {
  constructor(readonly result: RunResult) {
    super(`the expression could not be checked: ${result.errorMessage ?? ''}`);
    this.name = 'NotCheckedError';
  }
}

/**
 * What compiling an expression answered (its problem, or null), kept per process for the
 * expressions last checked (256 of at most 10,000 characters each), whichever pool checked them:
 * a manifest's expressions or a developer's try asked again are answered at once, with no worker.
 * A try asked for a worker for every check, so right after a runaway (its worker being replaced) a
 * try of an expression known to compile waited for one, and was answered "not run". Only answers
 * of a compile are kept; a compile stopped for its budget depends on the machine's load.
 */
export const knownCompiles = new Lru<string, string | null>(256);
