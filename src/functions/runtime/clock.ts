import { performance } from 'node:perf_hooks';

/**
 * Wall-clock microseconds with sub-millisecond resolution, comparable across threads (each thread
 * has its own `performance.timeOrigin`; the sum is the same clock). Only for the run deadline
 * handshake between the pool and its workers, never for business time.
 */
export function epochMicros(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
}

/**
 * A task's shared progress (a BigInt64Array): these slots per run, each epoch microseconds, 0 until
 * then. The worker stamps when it starts compiling the run's expression, when it starts the run (the
 * C11.4 deadline counts from here: compiling is not evaluating) and when the run ends. The pool's
 * watchdog reads them to hold a compile to its budget and a run to its deadline.
 */
export const SLOTS_PER_RUN = 3;
export const COMPILE_SLOT = 0;
export const START_SLOT = 1;
export const END_SLOT = 2;
