// The merchant admin surface (C7; merchant JWT). Every route of it is registered inside this
// plugin, so each passes the same gate: a platform JWT of one of C7.1's roles (a route may narrow
// them with `config.roles`), documented as the `bearer` security scheme. Errors use the envelope
// unless a route says otherwise.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { badRequest, forbidden } from '../http/errors.js';
import { isUuid } from '../ids.js';
import { MERCHANT_ROLES, userAuthHook } from '../http/user-auth.js';
import { claimRoutes, type SurfaceRoutes } from './surface.js';
import { storeExists } from '../accounts/accounts.repo.js';

export function merchantAdmin(deps: Deps, routes: SurfaceRoutes) {
  return async function merchantAdminPlugin(admin: FastifyInstance) {
    claimRoutes(admin, { name: 'merchant-admin', security: 'bearer', credential: 'merchant JWT', roles: MERCHANT_ROLES });
    admin.addHook('onRequest', userAuthHook(deps.jwt, MERCHANT_ROLES));
    // The operator names a store with `storeId`; one that does not exist is the caller's mistake
    // (400), checked once here for every admin route rather than failing later on a foreign key.
    admin.addHook('preHandler', async (request) => {
      if (request.user?.role !== 'SUPER_ADMIN') return;
      const named = namedStoreId(request);
      if (named === undefined) return;
      if (!isUuid(named)) throw badRequest('storeId must be a store id');
      if (!(await storeExists(deps.db, named))) throw badRequest('storeId names no store');
    });
    await routes(admin);
  };
}

/**
 * The `storeId` the operator names, in the body or the query string: read the same way on every
 * admin route, whatever the route's own schemas say of the rest of its request.
 */
function namedStoreId(request: FastifyRequest): unknown {
  return storeIdIn(request.body) ?? storeIdIn(request.query);
}

const storeIdIn = (part: unknown): unknown =>
  part !== null && typeof part === 'object' && 'storeId' in part ? (part as { storeId: unknown }).storeId : undefined;

/**
 * The store an admin call acts for. Store staff (MERCHANT, STAFF_ADMIN, MANAGER) act for their own
 * store. The platform operator (SUPER_ADMIN) has no store: it names one with `storeId` in the body
 * or query string (docs/decisions.md); without it, 400.
 */
export function adminStoreId(request: FastifyRequest): string {
  const user = request.user!;
  if (user.role !== 'SUPER_ADMIN') {
    if (!user.storeId) throw forbidden('This route needs a store account');
    return user.storeId;
  }
  const named = namedStoreId(request);
  if (!isUuid(named)) throw badRequest('storeId is required for the platform operator');
  return named;
}

/**
 * Whether the caller may touch a resource of `resourceStoreId`: its own store's staff, or the
 * operator. Another store's resource -> 403 (C7.1).
 */
export function assertStoreAccess(request: FastifyRequest, resourceStoreId: string): void {
  const user = request.user!;
  if (user.role === 'SUPER_ADMIN') return;
  if (user.storeId !== resourceStoreId) throw forbidden('This resource belongs to another store');
}
