// The App API surface and its common layer (C5): every route under /api/v1/ is registered inside
// this plugin, so each request passes the same gate: bearer token (401), rate limit (429), scope
// (403), with the version and rate-limit headers on every response; each route is documented with
// the `accessToken` security scheme.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError, forbidden, notFound, unauthenticated, unavailable } from '../http/errors.js';
import { bearerToken } from '../http/user-auth.js';
import type { ErrorShape } from '../http/shapes.js';
import type { AimedRoute } from '../http/route-shapes.js';
import { hasScope, type Scope } from '../oauth/scopes.js';
import type { TokenInfo } from '../oauth/token-cache.js';
import type { RateDecision } from '../ratelimit/limiter.js';
import { API_VERSION } from '../api-version.js';
import { claimRoutes, type SurfaceRoutes } from './surface.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** OAuth scope the App API route requires (403 without it). */
    scope?: Scope;
  }
  interface FastifyRequest {
    /** The calling app's installation: set for every App API or app-token request that passed the gate. */
    api?: TokenInfo;
  }
}

/** The caller's installation; only ever called inside the App API or app-token surface, after its gate. */
export function apiCaller(request: FastifyRequest): TokenInfo {
  return request.api!;
}

/** The scope a routed App API request's route requires (`config.scope`). */
function routeScope(request: FastifyRequest): Scope | undefined {
  return request.routeOptions.config?.scope;
}

/**
 * The gate, written with a `done` callback rather than as an async function, and with its steps
 * defined once rather than per request: on the fast path (token cached, tier cached, in-process
 * limiter) a request passes without a promise or a closure being made. Slow steps (database,
 * Redis) continue asynchronously.
 */
export function appApiGate(deps: Deps, defaultShape: ErrorShape, scopeOf: (request: FastifyRequest) => Scope | undefined = routeScope) {
  type Done = (err?: Error) => void;

  function afterToken(request: FastifyRequest, reply: FastifyReply, done: Done, found: TokenInfo | null) {
    if (!found) return done(unauthenticated('Invalid, expired or revoked access token'));
    request.api = found;
    const limit = deps.tiers.limitFor(found.appId);
    if (typeof limit === 'number') return afterTier(request, reply, done, limit);
    limit.then((n) => afterTier(request, reply, done, n), done);
  }

  function afterTier(request: FastifyRequest, reply: FastifyReply, done: Done, limit: number) {
    // Every authenticated request counts, whatever its method or outcome (Limits 2).
    const decision = deps.limiter.hit(`${request.api!.appId}:${request.api!.storeId}`, limit);
    if (!(decision instanceof Promise)) return afterLimit(request, reply, done, decision);
    decision.then((d) => afterLimit(request, reply, done, d), () => limiterFailed(done));
  }

  // The shared store (Redis) is down or too slow: fail closed with a quick 503, never let the call
  // through unlimited (docs/decisions.md "Hardening: observability"). The outage itself is logged
  // once by the store's client, not once per refused request.
  function limiterFailed(done: Done) {
    deps.metrics.rateLimitStoreErrors.inc();
    done(unavailable());
  }

  function afterLimit(request: FastifyRequest, reply: FastifyReply, done: Done, decision: RateDecision) {
    reply.header('X-RateLimit-Limit', decision.limit);
    reply.header('X-RateLimit-Remaining', decision.remaining);
    reply.header('X-RateLimit-Reset', decision.resetAt);
    if (!decision.allowed) {
      deps.metrics.rateLimited.inc();
      reply.header('Retry-After', 1);
      return done(new AppError('rate_limited', 'Rate limit exceeded'));
    }
    const scope = scopeOf(request);
    if (scope && !hasScope(request.api!.scopes, scope)) return done(forbidden(`This endpoint requires the ${scope} scope`));
    done();
  }

  return function gate(request: FastifyRequest, reply: FastifyReply, done: Done) {
    reply.header('X-SVC-Api-Version', API_VERSION);
    request.fallbackShape = defaultShape;
    const token = bearerToken(request);
    if (!token) return done(unauthenticated('Missing access token'));
    const caller = deps.tokens.lookup(token);
    if (!(caller instanceof Promise)) return afterToken(request, reply, done, caller);
    caller.then((found) => afterToken(request, reply, done, found), done);
  };
}

/**
 * The gate for an /api/v1 request Fastify refused before routing (a path it cannot percent-decode,
 * a path parameter over its length limit): no route matched, so no onRequest hook ran. It is an App
 * API call all the same: a stranger gets 401 first (Rules 1); an app's request counts and carries
 * the rate-limit headers (Limits 2, "Headers on every /api/v1/ response"; C5.5), may get 429, and
 * gets 403 without the scope of the endpoint the URL names (Rules 2). `aimedAt` finds that endpoint
 * (src/http/route-shapes.ts). `done` gets the gate's refusal, or nothing when the request passed.
 */
export function unroutedApiGate(deps: Deps, aimedAt: (method: string, url: string) => AimedRoute) {
  return appApiGate(deps, 'errors', (request) => aimedAt(request.method, request.url).scope);
}

/** The App API surface: `app.register(appApi(deps, (api) => ...), { prefix: '/api/v1' })`. */
export function appApi(deps: Deps, routes: SurfaceRoutes) {
  return async function appApiPlugin(api: FastifyInstance) {
    claimRoutes(api, { name: 'app-api', security: 'accessToken', credential: "an installed app's OAuth access token" });
    api.addHook('onRequest', appApiGate(deps, 'errors'));
    // Unknown App API paths still pass the gate first: 401 before 404, never a hint to strangers.
    api.setNotFoundHandler(async () => {
      throw notFound('Not Found');
    });
    await routes(api);
  };
}
