// The task watchdog's guard for a task no worker takes up (src/functions/runtime/task-watchdog.ts):
// given up after the pool's `notStartedMs`, not before, with the runs failed as "no worker started
// the run" (a niced pool is given its compile budget there, pool.ts). Real timers, no worker.
import { describe, expect, it } from 'vitest';
import { watchTask } from '../src/functions/runtime/task-watchdog.js';
import { compileOnly } from '../src/functions/runtime/compile-check.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a task no worker starts', () => {
  it('is given up after notStartedMs, not at the run deadline, and its runs say so', async () => {
    const watch = watchTask([compileOnly('{"operations": []}')], { timeoutMs: 20, compileTimeoutMs: 100, notStartedMs: 400 });
    try {
      await sleep(200); // ten run deadlines and two compile budgets: still waiting for a worker
      expect(watch.signal.aborted).toBe(false);
      await sleep(600);
      expect(watch.signal.aborted).toBe(true);
      expect(watch.timedOut()).toBe(false);
      expect(watch.failed(new Error('aborted'))).toEqual([
        expect.objectContaining({ status: 'failure', errorType: 'RuntimeError', errorMessage: 'no worker started the run within 400 ms' }),
      ]);
    } finally {
      watch.stop();
    }
  });
});
