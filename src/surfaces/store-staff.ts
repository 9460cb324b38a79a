// Two surfaces for the store's own people (MERCHANT, STAFF_ADMIN, MANAGER) with a merchant JWT, where
// the operator, who has no store, is refused (403), unlike the merchant admin surface.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { bearerToken, STORE_ROLES, userAuthHook } from '../http/user-auth.js';
import { claimRoutes, type SurfaceRoutes } from './surface.js';

/**
 * The store's staff acting for their store: installing apps (C4.1), its installations (C4.7),
 * session tokens (C4.8), adding staff (C2.4; a route may narrow the roles with `config.roles`).
 */
export function storeStaff(deps: Deps, routes: SurfaceRoutes) {
  return async function storeStaffPlugin(staff: FastifyInstance) {
    claimRoutes(staff, { name: 'store-staff', security: 'bearer', credential: "merchant JWT of the store's staff", roles: STORE_ROLES });
    staff.addHook('onRequest', userAuthHook(deps.jwt, STORE_ROLES));
    await routes(staff);
  };
}

/**
 * `GET /metafields/{id}` (C14.7): the same callers, but its errors say exactly `UNAUTHORIZED` (401,
 * no valid platform JWT) and `FORBIDDEN` (403, another role or no store), so it has a guard of its
 * own rather than the merchant admin gate, whose messages say more.
 */
export function metafieldRead(deps: Deps, routes: SurfaceRoutes) {
  return async function metafieldReadPlugin(read: FastifyInstance) {
    claimRoutes(read, { name: 'metafield-read', security: 'bearer', credential: "merchant JWT of the store's staff", roles: STORE_ROLES });
    read.addHook('onRequest', async (request: FastifyRequest) => {
      const token = bearerToken(request);
      const user = token ? await deps.jwt.verify(token) : null;
      if (!user) throw new AppError('unauthenticated', 'UNAUTHORIZED');
      if (!STORE_ROLES.includes(user.role) || !user.storeId) throw new AppError('forbidden', 'FORBIDDEN');
      request.user = user;
    });
    await routes(read);
  };
}
