// The dashboard's session and CSRF tokens (docs/decisions.md, "Dashboard (issue 15)").
//
// Session: the cookie holds the very platform JWT that POST /auth/login gives for the same login
// (C2.2, C2.3), so a page can do nothing the API would not let that login do, and the session ends
// when the JWT does (12 hours). Pages verify it with the same PlatformJwt as the API's guard.
//
// CSRF: a synchronizer token tied to the session without server state: HMAC-SHA256 under a key
// derived from SVC_SECRET, over the session's JWT (signed in) or over a random pre-session nonce kept
// in its own cookie (the login form, against login CSRF). Every POST form carries it in `_csrf`;
// a token from another session, or none, is refused before the handler runs. SameSite=Lax on both
// cookies is a second line, not the only one.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import type { PlatformUser } from '../accounts/jwt.js';

export const SESSION_COOKIE = 'svc_session';
export const LOGIN_NONCE_COOKIE = 'svc_login_nonce';
export const DASHBOARD_PATH = '/dashboard';
/** How long a shown login form stays usable (its nonce cookie's lifetime). */
export const LOGIN_NONCE_SECONDS = 3600;

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in dashboard user, from the session cookie's JWT. */
    dashboardUser?: PlatformUser & { token: string };
  }
}

const cookieOptions = (deps: Deps, maxAgeSeconds: number) => sessionCookieOptions(deps.config.production, maxAgeSeconds);

/** HttpOnly, SameSite=Lax, this path only; Secure in production config. */
export function sessionCookieOptions(production: boolean, maxAgeSeconds: number) {
  return {
    path: DASHBOARD_PATH,
    httpOnly: true,
    sameSite: 'lax' as const,
    // Over plain HTTP in development a Secure cookie would never come back.
    secure: production,
    maxAge: maxAgeSeconds,
  };
}

/** The JWT's remaining lifetime in whole seconds (its `exp`, read after it was verified). */
function remainingSeconds(deps: Deps, token: string): number {
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: number };
  return Math.max(0, Math.ceil((payload.exp ?? 0) - deps.clock.nowMs() / 1000));
}

export function startSession(deps: Deps, reply: FastifyReply, token: string) {
  reply.setCookie(SESSION_COOKIE, token, cookieOptions(deps, remainingSeconds(deps, token)));
  reply.clearCookie(LOGIN_NONCE_COOKIE, { path: DASHBOARD_PATH });
}

export function endSession(deps: Deps, reply: FastifyReply) {
  reply.clearCookie(SESSION_COOKIE, { ...cookieOptions(deps, 0), maxAge: undefined });
}

/** The signed-in user, or null: no cookie, or a JWT that is invalid or expired. */
export async function sessionUser(deps: Deps, request: FastifyRequest) {
  const token = request.cookies[SESSION_COOKIE];
  if (!token) return null;
  const user = await deps.jwt.verify(token);
  return user ? { ...user, token } : null;
}

const csrfKey = (deps: Deps) => createHash('sha256').update(`dashboard-csrf\0${deps.config.secret}`).digest();
const mac = (deps: Deps, binding: string) => createHmac('sha256', csrfKey(deps)).update(binding).digest('base64url');

/**
 * The login form's nonce: the one in the request's cookie, or a new one. Set on the reply either
 * way, so the cookie lives an hour from the form's latest showing: kept from the first one, a form
 * reloaded at minute 59 was refused as expired at minute 61 (the browser had dropped the cookie).
 */
export function loginNonce(deps: Deps, request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[LOGIN_NONCE_COOKIE];
  const nonce = existing && /^[A-Za-z0-9_-]{22,}$/.test(existing) ? existing : randomBytes(18).toString('base64url');
  reply.setCookie(LOGIN_NONCE_COOKIE, nonce, cookieOptions(deps, LOGIN_NONCE_SECONDS));
  return nonce;
}

export const sessionCsrf = (deps: Deps, token: string) => mac(deps, `session\0${token}`);
export const loginCsrf = (deps: Deps, nonce: string) => mac(deps, `login\0${nonce}`);

export function sameToken(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
