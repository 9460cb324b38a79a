// Platform JWTs (C2.3): HS256 with SVC_SECRET, issuer {site_url}, 12 hours.
import { SignJWT, jwtVerify } from 'jose';
import type { Clock } from '../clock.js';

export type Role = 'MERCHANT' | 'PARTNER' | 'STAFF_ADMIN' | 'MANAGER' | 'SUPER_ADMIN';
export const ROLES: Role[] = ['MERCHANT', 'PARTNER', 'STAFF_ADMIN', 'MANAGER', 'SUPER_ADMIN'];

export interface PlatformUser {
  id: string;
  role: Role;
  storeId: string | null;
}

const LIFETIME_SECONDS = 12 * 3600;

export class PlatformJwt {
  private readonly key: Uint8Array;
  constructor(secret: string, private readonly issuer: string, private readonly clock: Clock) {
    this.key = new TextEncoder().encode(secret);
  }

  sign(user: PlatformUser): Promise<string> {
    const iat = Math.floor(this.clock.nowMs() / 1000);
    const claims: Record<string, unknown> = { role: user.role };
    if (user.storeId) claims.storeId = user.storeId;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuer(this.issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + LIFETIME_SECONDS)
      .sign(this.key);
  }

  /** The user the token names, or null for anything invalid, expired or from another issuer. */
  async verify(token: string): Promise<PlatformUser | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: this.issuer,
        currentDate: this.clock.now(),
        // A token without an expiry would never expire (issue 10): every claim C2.3 names is required.
        requiredClaims: ['exp', 'iat', 'sub'],
      });
      const role = payload.role as Role;
      if (typeof payload.sub !== 'string' || !ROLES.includes(role)) return null;
      return { id: payload.sub, role, storeId: typeof payload.storeId === 'string' ? payload.storeId : null };
    } catch {
      return null;
    }
  }
}
