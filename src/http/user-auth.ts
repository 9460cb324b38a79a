// Platform-JWT authentication for the surfaces that take one (merchant admin, store staff,
// developer, operator; src/surfaces/): each installs `userAuthHook` as its guard, so no route of it
// can forget to authenticate. A route may narrow its surface's roles with `config.roles`.
import type { FastifyRequest } from 'fastify';
import type { PlatformJwt, PlatformUser, Role } from '../accounts/jwt.js';
import { forbidden, unauthenticated } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    user?: PlatformUser;
  }
  interface FastifyContextConfig {
    /** Roles allowed on the route; every authenticated user when not given. */
    roles?: Role[];
  }
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

export function userAuthHook(jwt: PlatformJwt, surfaceRoles?: Role[]) {
  return async (request: FastifyRequest) => {
    const token = bearerToken(request);
    if (!token) throw unauthenticated('Missing bearer token');
    const user = await jwt.verify(token);
    if (!user) throw unauthenticated('Invalid or expired token');
    const roles = request.routeOptions.config?.roles ?? surfaceRoles;
    if (roles && !roles.includes(user.role)) throw forbidden(`This route requires one of the roles ${roles.join(', ')}`);
    request.user = user;
  };
}

export const MERCHANT_ROLES: Role[] = ['MERCHANT', 'STAFF_ADMIN', 'MANAGER', 'SUPER_ADMIN'];
export const STORE_ROLES: Role[] = ['MERCHANT', 'STAFF_ADMIN', 'MANAGER'];
export const DEVELOPER_ROLES: Role[] = ['MERCHANT', 'PARTNER'];

/** The store the caller acts for; a user without one (partner, operator) gets 403. */
export function callerStoreId(request: FastifyRequest): string {
  const storeId = request.user?.storeId;
  if (!storeId) throw forbidden('This route needs a store account');
  return storeId;
}
