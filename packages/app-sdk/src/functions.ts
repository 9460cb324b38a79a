// Functions (C11): the platform's own runtime, so a local run gives exactly the production result.
// (Until this package is built and published, it is the service's module, by path.)
export { evaluateOnce, declarationProblems, compileFunction, TARGETS, type RunRequest, type RunResult, type FunctionTarget } from '../../../src/functions/runtime/index.js';
