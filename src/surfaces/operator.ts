// The platform operator's routes (C10.7, C12): `/apps/admin/...` with a SUPER_ADMIN JWT (403 for
// any other role): the test clock, job runs, the email log, payouts and developers' payout settings.
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { userAuthHook } from '../http/user-auth.js';
import { claimRoutes, type SurfaceRoutes } from './surface.js';
import type { Role } from '../accounts/jwt.js';

const OPERATOR_ROLES: Role[] = ['SUPER_ADMIN'];

export function operatorApi(deps: Deps, routes: SurfaceRoutes) {
  return async function operatorApiPlugin(ops: FastifyInstance) {
    claimRoutes(ops, { name: 'operator', security: 'bearer', credential: "the platform operator's JWT", roles: OPERATOR_ROLES });
    ops.addHook('onRequest', userAuthHook(deps.jwt, OPERATOR_ROLES));
    await routes(ops);
  };
}
