// A count of a caller's uses of a costly developer route per minute of the service clock (the
// shipping rate test, trying and replaying functions), on the shared attempt counters
// (attempts.ts), so every process of a deployment counts together. Past `limit`: 429 with the
// seconds until the minute is over. What happens when the counters cannot be reached is the
// route's to say: a route that sends requests anywhere refuses (closed); one whose work is bounded
// otherwise goes on (open), logged.
import type { Deps } from '../deps.js';
import { throttled, unavailable } from '../http/errors.js';

export interface PerMinute {
  /** The counter's key, e.g. `rate-test:{appId}`. */
  key: string;
  limit: number;
  /** The 429's message. */
  refusal: string;
  /** With the counters down: refuse (503, `closed`) or let the use through (`open`). */
  whenDown: { closed: string } | 'open';
  /** The log line when the counters are down. */
  downLog: string;
}

export async function countPerMinute(deps: Pick<Deps, 'attempts' | 'clock' | 'log'>, rule: PerMinute): Promise<void> {
  let decision;
  try {
    decision = await deps.attempts.take([{ key: rule.key, limit: rule.limit, windowMs: 60_000 }], deps.clock.nowMs());
  } catch (err) {
    deps.log.warn({ err }, rule.downLog);
    if (rule.whenDown === 'open') return;
    throw unavailable(rule.whenDown.closed);
  }
  if (!decision.allowed) throw throttled(rule.refusal, decision.retryAfterMs / 1000);
}
