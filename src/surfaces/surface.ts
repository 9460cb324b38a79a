// What every surface shares (design.md, "Shape of the code"; docs/decisions.md, "Surfaces"). A
// surface is a Fastify plugin with one credential: its guard hook authenticates every route
// registered inside it, and its onRoute hook writes each route's OpenAPI `security` (and a line of
// its description naming the credential, roles and scope) from what that same guard checks, so the
// reference cannot say one thing while the hook enforces another. No route file writes `security`
// or adds an authentication hook; src/app.ts registers each area's routes in the surface that
// guards them.
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Role } from '../accounts/jwt.js';

/**
 * The OpenAPI security scheme a surface's guard checks (declared in src/app.ts): an app's OAuth
 * access token, or a platform JWT. `null`: a public surface, whose routes need no credential (they
 * may check something else themselves, e.g. a signature or client credentials in the body).
 */
export type SecurityScheme = 'accessToken' | 'bearer' | null;

export type SurfaceName =
  // access token
  | 'app-api'
  | 'app-token'
  // platform JWT
  | 'merchant-admin'
  | 'store-staff'
  | 'metafield-read'
  | 'developer'
  | 'operator'
  // public
  | 'platform'
  | 'accounts'
  | 'oauth-client'
  | 'storefront'
  | 'payments'
  // session cookie: the dashboard's HTML pages (src/dashboard/), hidden from the OpenAPI document
  | 'dashboard';

export interface Surface {
  name: SurfaceName;
  security: SecurityScheme;
  /** What the guard checks, for the reference: "developer JWT", "none; the Stripe-Signature header". */
  credential: string;
  /** The platform-JWT roles the guard admits (the very list it is given); a route may narrow them with `config.roles`. */
  roles?: readonly Role[];
}

/** The routes of a surface: `(instance) => { instance.register(areaRoutes, { deps }) }`. */
export type SurfaceRoutes = (instance: FastifyInstance) => Promise<unknown> | unknown;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The surface the route is registered in; set by the surface, never by the route. */
    surface?: SurfaceName;
  }
}

/**
 * Claims every route registered in `instance` (and in the plugins registered inside it) for the
 * surface: the route's `config.surface`, its OpenAPI `security` and the `Credential:` line of its
 * description. A route that writes its own
 * `security`, or a surface registered inside another, is a mistake caught at start.
 */
export function claimRoutes(instance: FastifyInstance, surface: Surface): void {
  instance.addHook('onRoute', (route) => {
    const name = `${route.method} ${route.url}`;
    if (route.config?.surface) throw new Error(`${name} is registered in two surfaces (${route.config.surface}, ${surface.name}): surfaces do not nest`);
    if (route.schema?.security) throw new Error(`${name} writes its own OpenAPI security: its surface writes it (src/surfaces/surface.ts)`);
    // New objects: route files share `config` and schema parts between routes.
    route.config = { ...route.config, surface: surface.name };
    const description = [route.schema?.description, `Credential: ${credentialOf(surface, route)}.`].filter(Boolean).join('\n\n');
    route.schema = { ...route.schema, description, ...(surface.security ? { security: [{ [surface.security]: [] }] } : {}) };
  });
}

/** The route's credential in words: the surface's, with the roles and the scope its guard checks. */
function credentialOf(surface: Surface, route: RouteOptions): string {
  const roles = route.config?.roles ?? surface.roles;
  const scope = route.config?.scope;
  return [surface.credential, roles && `${roles.length > 1 ? 'roles' : 'role'} ${roles.join(', ')}`, scope && `scope \`${scope}\``].filter(Boolean).join(', ');
}

export interface RouteEntry {
  method: string;
  url: string;
  /** Undefined for a route registered outside every surface (a mistake the auth matrix test catches). */
  surface: SurfaceName | undefined;
  /** The OpenAPI security scheme the route is documented with. */
  security: string | null;
  hidden: boolean;
}

const tables = new WeakMap<FastifyInstance, RouteOptions[]>();

/** Records every route registered on `app` from now on: call it before any route is registered. */
export function recordRoutes(app: FastifyInstance): void {
  const routes: RouteOptions[] = [];
  tables.set(app, routes);
  // This root hook runs before the surfaces' own; it keeps the route object, which they complete.
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
}

/** The route options of every route recorded on `app` (recordRoutes), schemas included. */
export function recordedRoutes(app: FastifyInstance): readonly RouteOptions[] {
  const routes = tables.get(app);
  if (!routes) throw new Error('recordedRoutes: the app did not record its routes (recordRoutes)');
  return routes;
}

/** Every route of an app built with `recordRoutes`, one entry per method, with its surface. */
export function routeTable(app: FastifyInstance): RouteEntry[] {
  const routes = tables.get(app);
  if (!routes) throw new Error('routeTable: the app did not record its routes (recordRoutes)');
  return routes.flatMap((route) =>
    ([] as string[]).concat(route.method).map((method) => ({
      method,
      url: route.url,
      surface: route.config?.surface,
      security: route.schema?.security?.[0] ? Object.keys(route.schema.security[0])[0] : null,
      hidden: route.schema?.hide === true,
    })),
  );
}
