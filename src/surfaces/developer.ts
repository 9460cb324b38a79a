// The developer API (app-api.md "API surfaces"): `/apps/developer/...` with a developer JWT, role
// MERCHANT or PARTNER (403 for any other role; no OAuth scope). Whether the caller owns the app a
// route names is the route's business (403 another developer's app, 404 an unknown one).
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { DEVELOPER_ROLES, userAuthHook } from '../http/user-auth.js';
import { claimRoutes, type SurfaceRoutes } from './surface.js';

export function developerApi(deps: Deps, routes: SurfaceRoutes) {
  return async function developerApiPlugin(dev: FastifyInstance) {
    claimRoutes(dev, { name: 'developer', security: 'bearer', credential: 'developer JWT', roles: DEVELOPER_ROLES });
    dev.addHook('onRequest', userAuthHook(deps.jwt, DEVELOPER_ROLES));
    await routes(dev);
  };
}
