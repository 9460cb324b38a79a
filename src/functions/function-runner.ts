// The service's one function runner (the pool of src/functions/runtime/pool.ts), started on first
// use: a process that never runs a function (a worker, most test files) starts no threads.
import { createFunctionRunner, type FunctionRunner, type FunctionRunnerOptions, type FunctionRunnerStats } from './runtime/index.js';

export function lazyFunctionRunner(options: FunctionRunnerOptions = {}): FunctionRunner {
  let runner: FunctionRunner | null = null;
  const started = () => (runner ??= createFunctionRunner(options));
  return {
    run: (request) => started().run(request),
    runAll: (requests) => started().runAll(requests),
    checkExpressions: (expressions) => started().checkExpressions(expressions),
    ready: () => started().ready(),
    stats: (): FunctionRunnerStats => runner?.stats() ?? { threads: 0, loaded: 0, busy: 0, waiting: 0, runs: 0, tasks: 0, timeouts: 0, saturated: 0, workersReplaced: 0 },
    close: async () => {
      await runner?.close();
    },
  };
}
