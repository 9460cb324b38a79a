// The function runtime of contract C11: CEL evaluation, limits and target output shapes. It imports
// nothing from the rest of the service (node built-ins and npm packages only), so the app SDK can
// ship this very module and a developer's local run gives the production result.
export { compileFunction, configurationProblem, celToJson, VARIABLES, type CompileResult } from './cel.js';
export { declarationProblems, declarationsProblems } from './declaration.js';
export { evaluateOnce, type RunRequest } from './evaluate.js';
export {
  ERROR_TYPES, MAX_CONFIGURATION_BYTES, MAX_EXPRESSION_CHARS, MAX_INPUT_BYTES, MAX_OUTPUT_BYTES, RUN_TIMEOUT_MS,
  type FunctionErrorType, type RunResult,
} from './limits.js';
export { OUTPUT_SCHEMAS, TARGETS, isTarget, outputProblem, type FunctionTarget } from './targets.js';
export { createFunctionRunner, type FunctionRunner, type FunctionRunnerOptions, type FunctionRunnerStats } from './pool.js';
export { NotCheckedError } from './compile-check.js';

/** C11.4's one run: `runner.run` of a `createFunctionRunner()`; never throws, always a result. */
export type RunFunction = (request: import('./evaluate.js').RunRequest) => Promise<import('./limits.js').RunResult>;
