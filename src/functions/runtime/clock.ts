import { performance } from 'node:perf_hooks';

/**
 * Wall-clock microseconds with sub-millisecond resolution, comparable across threads (each thread
 * has its own `performance.timeOrigin`; the sum is the same clock). Only for the run deadline
 * handshake between the pool and its workers, never for business time.
 */
export function epochMicros(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
}
