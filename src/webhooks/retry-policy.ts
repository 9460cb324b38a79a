// app-api.md Retries and C8.3/C8.4: what an attempt's result means for the delivery.
import type { SendResult } from './http-client.js';

export const DEFAULT_MAX_ATTEMPTS = 4;
/** Seconds from a failed attempt to the next one, by the number of the attempt that failed. */
export const RETRY_DELAYS_S = [60, 300, 900] as const;
export const RETRY_JITTER = 0.1;

export type DeliveryStatus = 'pending' | 'retrying' | 'success' | 'failed';
export type Verdict = 'success' | 'retry' | 'permanent';

/**
 * Errors of deliveries that were not sent and never can be: retrying would not help. The last five
 * are a target that no longer takes the delivery (deliveries.repo.ts `targetGone`).
 */
const NOT_SENDABLE = new Set(['blocked_address', 'invalid_address', 'body_pruned',
  'subscription_deleted', 'webhook_deleted', 'app_uninstalled', 'scope_withdrawn', 'manifest_webhook_removed']);

/**
 * 2xx succeeds. 429, 5xx, network errors and the timeout are retried. Any other status fails at
 * once: other 4xx (Retries 3), and 3xx, because redirects are not followed (C8.9: the redirect target
 * was never checked; docs/decisions.md "Webhooks"). An address refused by C8.9 is not sent and fails.
 */
export function verdictOf(result: Pick<SendResult, 'status' | 'error'>): Verdict {
  const { status } = result;
  if (status === null) return NOT_SENDABLE.has(result.error ?? '') ? 'permanent' : 'retry';
  if (status >= 200 && status < 300) return 'success';
  if (status === 429 || status >= 500) return 'retry';
  return 'permanent';
}

/** The delay before the attempt after `failedAttempt` (1-based), with +/-10 % jitter. */
export function retryDelayMs(failedAttempt: number, random: () => number = Math.random): number {
  const base = RETRY_DELAYS_S[Math.min(failedAttempt, RETRY_DELAYS_S.length) - 1];
  return Math.round(base * 1000 * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}

export interface NextState {
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

export function nextState(verdict: Verdict, attempt: number, maxAttempts: number, finishedAt: Date, random?: () => number): NextState {
  if (verdict === 'success') return { status: 'success', nextAttemptAt: null };
  if (verdict === 'retry' && attempt < maxAttempts) {
    return { status: 'retrying', nextAttemptAt: new Date(finishedAt.getTime() + retryDelayMs(attempt, random)) };
  }
  return { status: 'failed', nextAttemptAt: null };
}

/** The attempt's error text for the log: transport errors as reported, 3xx named for what it was. */
export function attemptError(result: Pick<SendResult, 'status' | 'error'>): string | null {
  if (result.error) return result.error;
  if (result.status !== null && result.status >= 300 && result.status < 400) return 'redirect_not_followed';
  return null;
}
