// The dashboard (issue 15): server-rendered pages under /dashboard for the developer (and later the
// merchant), on the same services and the same authorization as the API. Everything here is
// encapsulated in this plugin: cookies, form bodies, the view engine and the security headers
// (helmet, with a strict content security policy) apply to /dashboard only, so the JSON API's
// headers do not change. Decisions: docs/decisions.md, "Dashboard (issue 15)".
//
// The pages are claimed by the `dashboard` surface (src/surfaces/surface.ts) and hidden from the
// OpenAPI document: they are HTML for people, not operations for clients, and they authenticate
// with a cookie, not a documented security scheme (test/dashboard.test.ts checks their own matrix).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { Deps } from '../deps.js';
import type { Role } from '../accounts/jwt.js';
import { AppError } from '../http/errors.js';
import { assertCleanPart } from '../http/input-guard.js';
import { claimRoutes } from '../surfaces/surface.js';
import { page } from './render.js';
import { LOGIN_NONCE_COOKIE, loginCsrf, sameToken, sessionCsrf, sessionUser } from './session.js';
import { authPages } from './auth.pages.js';
import { appPages } from './apps.pages.js';
import { appTestPages } from './app-tests.pages.js';
import { deliveryPages } from './deliveries.pages.js';
import { runPages } from './runs.pages.js';
import { storePages } from './store.pages.js';
import { settingsPages } from './settings.pages.js';
import { earningsPages } from './earnings.pages.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A dashboard page anyone may open (the login page, the assets); every other one needs a session. */
    publicPage?: boolean;
  }
}

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** Served from the npm package, never a CDN (the CSP allows scripts from this origin only). */
const ASSETS: Record<string, { file: string; type: string }> = {
  'htmx.min.js': { file: require.resolve('htmx.org/dist/htmx.min.js'), type: 'text/javascript; charset=utf-8' },
  'dashboard.js': { file: join(here, 'assets', 'dashboard.js'), type: 'text/javascript; charset=utf-8' },
  'dashboard.css': { file: join(here, 'assets', 'dashboard.css'), type: 'text/css; charset=utf-8' },
};

export function dashboard(deps: Deps) {
  return async function dashboardPlugin(instance: FastifyInstance) {
    claimRoutes(instance, { name: 'dashboard', security: null, credential: 'the dashboard session cookie' });
    // Pages are not API operations (see the head of this file): kept out of /openapi.json, so
    // test/route-schemas.test.ts, which asks documented routes for response schemas, skips them.
    instance.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });

    await instance.register(cookie);
    await instance.register(formbody);
    await instance.register(helmet, {
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'none'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
          baseUri: ["'none'"],
        },
      },
      referrerPolicy: { policy: 'same-origin' },
    });
    await instance.register(view, {
      engine: { eta: new Eta({ views: join(here, 'views'), autoEscape: true, cache: deps.config.production }) },
      templates: join(here, 'views'),
      viewExt: 'eta',
    });

    // Sessions: every page but the public ones needs a signed-in user of the page's roles.
    instance.addHook('onRequest', async (request, reply) => {
      const config = request.routeOptions.config;
      const user = await sessionUser(deps, request);
      if (user) request.dashboardUser = user;
      if (config?.publicPage || !request.routeOptions.url) return;
      if (!user) {
        const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
        return reply.code(303).header('Cache-Control', 'no-store').redirect(`/dashboard/login${next}`, 303);
      }
      const roles = config?.roles;
      if (roles && !roles.includes(user.role)) return refuse(request, reply, 403, 'Not for this account', `This page is for ${describeRoles(roles)} accounts.`);
    });

    // Form fields are client input like any JSON body (src/http/input-guard.ts): a NUL or an unpaired
    // surrogate is a 400 page naming the field, never a failed write (a 500).
    instance.addHook('preValidation', async (request) => {
      if (request.body !== undefined && request.body !== null) assertCleanPart(request.body, 'body');
    });

    // CSRF: every form post carries the token of its session (session.ts), checked before the handler.
    instance.addHook('preHandler', async (request, reply) => {
      if (request.method !== 'POST') return;
      const body: unknown = request.body;
      const given = body && typeof body === 'object' ? (body as Record<string, unknown>)._csrf : undefined;
      const user = request.dashboardUser;
      const expected = request.routeOptions.config?.publicPage
        ? (request.cookies[LOGIN_NONCE_COOKIE] ? loginCsrf(deps, request.cookies[LOGIN_NONCE_COOKIE]) : null)
        : user ? sessionCsrf(deps, user.token) : null;
      if (!expected || !sameToken(expected, given)) {
        return refuse(request, reply, 403, 'This form has expired', 'The form did not carry this session\'s security token. Go back, reload the page and send it again.');
      }
    });

    const refuse = (request: FastifyRequest, reply: FastifyReply, status: number, heading: string, message: string) =>
      page(deps, request, reply, 'error', { title: heading, heading, message, status }, status);

    instance.setErrorHandler((err: FastifyError, request, reply) => {
      if (err instanceof AppError) {
        if (err.retryAfterSeconds !== undefined) reply.header('Retry-After', err.retryAfterSeconds);
        // A page never confirms that another account's resource exists: what the API answers 403
        // for (another developer's app, C3.2) is "not found" here, like an unknown one.
        if (err.kind === 'forbidden' || err.kind === 'not_found') return refuse(request, reply, 404, 'Not found', 'There is nothing here, or it belongs to another account.');
        return refuse(request, reply, err.status, err.status === 429 ? 'Too many attempts' : 'Something is not right', err.message);
      }
      const status = err.statusCode ?? 500;
      if (status >= 400 && status < 500) return refuse(request, reply, status === 413 ? 413 : 400, 'Something is not right', status === 413 ? 'The form is too large.' : 'The request could not be read.');
      request.log.error({ err }, 'unexpected error');
      return refuse(request, reply, 500, 'Something went wrong', `The page could not be shown. Request ${request.id}.`);
    });
    instance.setNotFoundHandler((request, reply) => refuse(request, reply, 404, 'Not found', 'There is no such page.'));

    for (const [name, asset] of Object.entries(ASSETS)) {
      const content = readFileSync(asset.file);
      instance.get(`/assets/${name}`, { config: { publicPage: true } }, async (_request, reply) =>
        reply.header('Content-Type', asset.type).header('Cache-Control', 'public, max-age=3600').send(content));
    }

    await instance.register(authPages, { deps });
    await instance.register(appPages, { deps });
    await instance.register(appTestPages, { deps });
    await instance.register(deliveryPages, { deps });
    await instance.register(runPages, { deps });
    await instance.register(storePages, { deps });
    await instance.register(settingsPages, { deps });
    await instance.register(earningsPages, { deps });
  };
}

function describeRoles(roles: readonly Role[]) {
  const words: Record<Role, string> = { MERCHANT: 'merchant', PARTNER: 'partner', STAFF_ADMIN: 'staff admin', MANAGER: 'manager', SUPER_ADMIN: 'operator' };
  return roles.map((r) => words[r]).join(' or ');
}
