// Throttling of failed logins (issue 10 item 16; docs/decisions.md "Hardening"). Two counters, in
// the shared store when REDIS_URL is set:
//   - per account (the email, trimmed and lowercased, hashed): 5 failures lock it for 15 minutes;
//   - per client address (request.ip; an IPv6 client by its /64, src/net/client-address.ts): 30
//     failures lock that address for 15 minutes, whatever emails it tries (password spraying). Behind a load balancer request.ip is the client's only
//     when SVC_TRUST_PROXY names the balancer (src/config/variables.ts).
// Checked before the email is looked up or the password hashed, so a locked account answers 429
// to the right password too and cannot be probed, and an email that does not exist is counted
// and locked exactly like one that does (the 429 says nothing about which it is). A success clears
// the account's failures and does not count against the address.
import { createHash } from 'node:crypto';
import type { Deps } from '../deps.js';
import { throttled } from '../http/errors.js';
import type { AttemptRule } from '../ratelimit/attempts.js';
import { clientAddressKey } from '../net/client-address.js';

const WINDOW_MS = 15 * 60_000;
export const LOGIN_LIMITS = {
  account: { limit: 5, windowMs: WINDOW_MS },
  client: { limit: 30, windowMs: WINDOW_MS },
} as const;

export const THROTTLED_MESSAGE = 'Too many failed login attempts. Try again later.';

export interface LoginAttempt {
  /** The password was right: clear the account's failures and give the attempt back to the address. */
  succeeded(): Promise<void>;
}

const NOTHING: LoginAttempt = { succeeded: async () => {} };

/** The key of an account: a hash, so the shared store holds no email addresses. */
export const accountKey = (email: string) =>
  `login:account:${createHash('sha256').update(email.trim().toLowerCase()).digest('base64url').slice(0, 32)}`;
/** The key of a client address: an IPv6 client counts as its whole /64, which it controls. */
export const clientKey = (ip: string) => `login:client:${clientAddressKey(ip)}`;

/**
 * Counts this attempt as a failure until `succeeded` says otherwise; throws a 429 (with
 * Retry-After) while the account or the address is locked. If the store is unreachable the
 * attempt is let through, unthrottled: Redis down must not lock every user out.
 */
export async function beginLogin(deps: Deps, email: string, ip: string): Promise<LoginAttempt> {
  const rules: AttemptRule[] = [
    { key: accountKey(email), ...LOGIN_LIMITS.account },
    { key: clientKey(ip), ...LOGIN_LIMITS.client },
  ];
  let decision;
  try {
    decision = await deps.attempts.take(rules, deps.clock.nowMs());
  } catch (err) {
    deps.log?.warn({ err }, 'login throttle unavailable; attempt not throttled');
    return NOTHING;
  }
  if (!decision.allowed) throw throttled(THROTTLED_MESSAGE, decision.retryAfterMs / 1000);
  return {
    async succeeded() {
      try {
        await Promise.all([deps.attempts.reset(rules[0].key), deps.attempts.refund(rules[1].key)]);
      } catch (err) {
        deps.log?.warn({ err }, 'login throttle unavailable; success not recorded');
      }
    },
  };
}
