// The app-token surface: calls an installed app makes outside /api/v1 with its access token, the
// GDPR `acknowledge` and `complete` (app-api.md GDPR routes). The guard checks the token only, as
// the App API gate's first step does (same cache, same 401s); the rest of that gate (rate limit,
// scopes, version header, the errors body) is the App API's (C5), so these routes answer
// envelopes. The caller's installation is `apiCaller(request)`.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { unauthenticated } from '../http/errors.js';
import { bearerToken } from '../http/user-auth.js';
import { claimRoutes, type SurfaceRoutes } from './surface.js';
import './app-api.js'; // request.api

export function appToken(deps: Deps, routes: SurfaceRoutes) {
  return async function appTokenPlugin(instance: FastifyInstance) {
    claimRoutes(instance, { name: 'app-token', security: 'accessToken', credential: "the app's OAuth access token for the store (any scope)" });
    instance.addHook('onRequest', async (request: FastifyRequest) => {
      const token = bearerToken(request);
      if (!token) throw unauthenticated('Missing access token');
      const found = await deps.tokens.lookup(token);
      if (!found) throw unauthenticated('Invalid, expired or revoked access token');
      request.api = found;
    });
    await routes(instance);
  };
}
