// The install handoff of C4.1/C4.2: `{appUrl}/auth?code&hmac&shop&state&timestamp`, where `hmac` is
// the lowercase hex HMAC-SHA256 (key: the app's client secret) of every other parameter, sorted by
// name, written `name=value` with decoded values and joined with `&`.
import { hmacSha256Hex, safeEqual } from '../crypto.js';

export function handoffMessage(params: Record<string, string>): string {
  return Object.keys(params)
    .filter((k) => k !== 'hmac')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
}

export function signHandoff(clientSecret: string, params: Record<string, string>): string {
  return hmacSha256Hex(clientSecret, handoffMessage(params));
}

/** What an app does on its `/auth` endpoint; kept here for tests and the docs' example. */
export function verifyHandoff(clientSecret: string, query: URLSearchParams): boolean {
  const params = Object.fromEntries(query.entries());
  const given = params.hmac;
  return typeof given === 'string' && safeEqual(given, signHandoff(clientSecret, params));
}

const HANDOFF_KEYS = new Set(['code', 'hmac', 'shop', 'state', 'timestamp']);

/**
 * `{appUrl}/auth?...` read as a URL, not as text: an app URL may carry its own query (`?env=prod`),
 * kept first and signed with the rest, since the app checks "every other query parameter" (C4.2);
 * a fragment is dropped. Pasted as text, such a URL put the handoff after the app's `?` or `#`:
 * the browser went to the app's URL without `/auth`, the code and state in a fragment it never
 * sends, and the app could not be installed.
 */
export function handoffUrl(appUrl: string, clientSecret: string, params: { code: string; shop: string; state: string; timestamp: string }): string {
  const url = new URL(appUrl);
  // Each name once (the last value), as apps refuse a repeated parameter (the SDK's verifyHandoff).
  const appParams = [...new Map([...url.searchParams].filter(([name]) => !HANDOFF_KEYS.has(name)))];
  const hmac = signHandoff(clientSecret, Object.fromEntries([...appParams, ...Object.entries(params)]));
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/auth`;
  url.search = new URLSearchParams([
    ...appParams, ['code', params.code], ['hmac', hmac], ['shop', params.shop], ['state', params.state], ['timestamp', params.timestamp],
  ]).toString();
  url.hash = '';
  return url.toString();
}
