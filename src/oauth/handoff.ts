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

export function handoffUrl(appUrl: string, clientSecret: string, params: { code: string; shop: string; state: string; timestamp: string }): string {
  const hmac = signHandoff(clientSecret, params);
  const query = new URLSearchParams({ code: params.code, hmac, shop: params.shop, state: params.state, timestamp: params.timestamp });
  return `${appUrl.replace(/\/+$/, '')}/auth?${query.toString()}`;
}
