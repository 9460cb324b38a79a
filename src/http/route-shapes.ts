// Errors Fastify raises before routing (a path it cannot percent-decode, a path parameter over
// `maxParamLength`) have no route, so no `config.shape` or `config.scope`; yet C5.1 wants every error
// of an endpoint in that endpoint's shape (`GET /api/v1/shipping_zones/%FF.json` is the shipping zones
// endpoint, whose errors are envelopes), and the App API gate wants its scope (Rules 2). This index,
// filled from the routes' own configs as they are registered, finds the route a raw URL was aiming
// at by its pattern.
import type { FastifyInstance } from 'fastify';
import type { Scope } from '../oauth/scopes.js';
import type { ErrorShape } from './shapes.js';
import { pathOfTarget } from './edge.js';

const API_PREFIX = '/api/v1/';

interface Entry {
  methods: string[];
  pattern: RegExp;
  shape: ErrorShape | undefined;
  scope: Scope | undefined;
}

/** What a raw URL's route declares: its error shape, and on the App API its scope (if any). */
export interface AimedRoute {
  shape: ErrorShape;
  scope?: Scope;
}

/** `/api/v1/products/:id.json` -> /^\/api\/v1\/products\/[^/]+\.json$/ ; `*` matches the rest. */
function patternOf(url: string): RegExp {
  const source = url
    .split(/(:\w+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}/?$`);
}

/** The shape of a surface's routes that declare none: the App API gate's default, else the envelope. */
export const defaultShape = (url: string): ErrorShape => (url.startsWith(API_PREFIX) ? 'errors' : 'envelope');

/** Registers the onRoute hook (call before any route is registered) and returns the lookup. */
export function routeIndex(app: FastifyInstance): (method: string, rawUrl: string) => AimedRoute {
  const entries: Entry[] = [];
  app.addHook('onRoute', (route) => {
    // Only the App API has more than one shape; elsewhere every error is an envelope.
    if (!route.url.startsWith(API_PREFIX)) return;
    const methods = ([] as string[]).concat(route.method);
    entries.push({ methods, pattern: patternOf(route.url), shape: route.config?.shape, scope: route.config?.scope });
  });
  return (method, rawUrl) => {
    // A target in absolute form names the endpoint its path does, as the router reads it.
    const path = pathOfTarget(rawUrl).split('?')[0];
    if (!path.startsWith(API_PREFIX)) return { shape: 'envelope' };
    const matching = entries.filter((e) => e.pattern.test(path));
    // Only a route of the very method has a scope to ask for; another method's route only lends its
    // shape (the resource's), as a routed request to it would get a 404 without a scope check.
    const exact = matching.find((e) => e.methods.includes(method));
    const hit = exact ?? matching[0];
    return { shape: hit?.shape ?? defaultShape(path), ...(exact?.scope ? { scope: exact.scope } : {}) };
  };
}
