// Sign-in (C2.2 through the same login service as POST /auth/login, with its throttling), sign-out
// and the home page.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { login } from '../accounts/accounts.service.js';
import { AppError } from '../http/errors.js';
import { DEVELOPER_ROLES, STORE_ROLES } from '../http/user-auth.js';
import { typed } from '../http/typed.js';
import { page } from './render.js';
import { endSession, loginCsrf, loginNonce, startSession } from './session.js';

const LoginForm = Type.Object({
  email: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
  next: Type.Optional(Type.String()),
  _csrf: Type.Optional(Type.String()),
});

/**
 * Only a dashboard path of this site: never another origin (`//evil`, `https://...`). Printable
 * ASCII only: a browser sends a path percent-encoded, and anything else (a control character, a
 * character above U+00FF) cannot be written in the Location header, where Node throws (a 500).
 */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/dashboard(\/[^/\\]|$|\?)/.test(next) && /^[\x21-\x7e]+$/.test(next) ? next : '/dashboard';
}

export async function authPages(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  const loginPage = (request: Parameters<typeof page>[1], reply: Parameters<typeof page>[2], values: { email?: string; next?: string }, error: string | null, status = 200) =>
    page(deps, request, reply, 'login', {
      title: 'Sign in',
      loginCsrf: loginCsrf(deps, loginNonce(deps, request, reply)),
      email: values.email ?? '',
      next: safeNext(values.next),
      error,
      signedOut: false,
    }, status);

  app.get('/login', {
    config: { publicPage: true },
    schema: { querystring: Type.Object({ next: Type.Optional(Type.String()), signed_out: Type.Optional(Type.String()) }) },
  }, async (request, reply) => {
    if (request.dashboardUser) return reply.redirect(safeNext(request.query.next), 303);
    return page(deps, request, reply, 'login', {
      title: 'Sign in',
      loginCsrf: loginCsrf(deps, loginNonce(deps, request, reply)),
      email: '',
      next: safeNext(request.query.next),
      error: null,
      signedOut: request.query.signed_out === '1',
    });
  });

  app.post('/login', { config: { publicPage: true }, schema: { body: LoginForm } }, async (request, reply) => {
    const { email = '', password = '', next } = request.body;
    try {
      const session = await login(deps, { email, password }, request.ip);
      startSession(deps, reply, session.token);
      return reply.redirect(safeNext(next), 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.retryAfterSeconds !== undefined) reply.header('Retry-After', err.retryAfterSeconds);
      return loginPage(request, reply, { email, next }, err.message, err.status);
    }
  });

  app.post('/logout', { schema: { body: Type.Object({ _csrf: Type.Optional(Type.String()) }) } }, async (_request, reply) => {
    endSession(deps, reply);
    return reply.redirect('/dashboard/login?signed_out=1', 303);
  });

  app.get('/', {}, async (request, reply) => {
    const user = request.dashboardUser!;
    if (DEVELOPER_ROLES.includes(user.role)) return reply.redirect('/dashboard/apps', 303);
    if (STORE_ROLES.includes(user.role)) return reply.redirect('/dashboard/store/apps', 303);
    return page(deps, request, reply, 'home', { title: 'Dashboard' });
  });
}
