// Functions (C11): the platform's own runtime, so a local run gives exactly the production result.
// The service's module is imported by path (not copied): the package build compiles it into `dist`
// beside the SDK, so the published package ships the very code the platform runs. Only the in-process
// parts are imported here; the service's worker pool (piscina, esbuild) stays out of the SDK.
export { evaluateOnce, type RunRequest } from '../../../src/functions/runtime/evaluate.js';
export { declarationProblems } from '../../../src/functions/runtime/declaration.js';
export { compileFunction } from '../../../src/functions/runtime/cel.js';
export { TARGETS, OUTPUT_SCHEMAS, type FunctionTarget } from '../../../src/functions/runtime/targets.js';
export {
  ERROR_TYPES, MAX_CONFIGURATION_BYTES, MAX_EXPRESSION_CHARS, MAX_INPUT_BYTES, MAX_OUTPUT_BYTES, RUN_TIMEOUT_MS,
  type FunctionErrorType, type RunResult,
} from '../../../src/functions/runtime/limits.js';
