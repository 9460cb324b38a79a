// Session tokens (C4.8): what an embedded app's frontend sends its backend. HS256 with the app's
// client secret; `iss` the platform's site URL, `aud` the client id, `dest` the store's slug,
// `sub` the store's id, a 60-second life.
import { jwtVerify } from 'jose';
import { assertSecret } from './signatures.js';

export interface SessionToken {
  /** The store's slug. */
  shop: string;
  /** The store's id. */
  storeId: string;
  /** An id of the merchant's session with this installation. */
  sessionId: string;
  expiresAt: Date;
}

export async function verifySessionToken(
  token: string,
  app: { clientId: string; clientSecret: string; issuer: string },
  options: { clockToleranceSeconds?: number; now?: Date } = {},
): Promise<SessionToken> {
  assertSecret(app.clientSecret, 'clientSecret');
  // jose checks `iss` and `aud` only when it is given them: an unset ISSUER or CLIENT_ID (undefined
  // behind a `!`) would let a token for another app or platform through. A configuration error.
  for (const [name, value] of [['issuer', app.issuer], ['clientId', app.clientId]] as const) {
    if (typeof value !== 'string' || value === '') throw new TypeError(`${name} is missing: give the platform's URL (issuer) and the app's client id`);
  }
  const { payload } = await jwtVerify(token, new TextEncoder().encode(app.clientSecret), {
    algorithms: ['HS256'],
    // The platform's URL as the app keeps it, e.g. PLATFORM_URL=http://localhost:3000/: the same
    // issuer with a trailing slash or without (a bare 'unexpected "iss" claim value' said nothing of it).
    issuer: [app.issuer.replace(/\/+$/, ''), `${app.issuer.replace(/\/+$/, '')}/`],
    audience: app.clientId,
    clockTolerance: options.clockToleranceSeconds ?? 5,
    currentDate: options.now,
    requiredClaims: ['exp', 'sub', 'dest'],
  });
  if (typeof payload.dest !== 'string' || typeof payload.sub !== 'string') throw new Error('session token: dest and sub must be strings');
  return { shop: payload.dest, storeId: payload.sub, sessionId: String(payload.sid ?? ''), expiresAt: new Date(payload.exp! * 1000) };
}
