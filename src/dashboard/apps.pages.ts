// Developer pages for apps (C3): list, create, one app, edit, rotate the secret. Each calls the
// service the developer API's route calls (src/apps/apps.service.ts), with the signed-in user, so
// the same ownership rule and the same validation apply; a refused form is shown again with the
// service's message next to the field it names.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { appView, createApp, listApps, ownedApp, patchApp, rotateSecret } from '../apps/apps.service.js';
import { appEarnings, appInstallations } from '../billing/developer-analytics.js';
import { parsePage } from '../http/paging.js';
import { PagingQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { DEVELOPER_ROLES } from '../http/user-auth.js';
import { TARGETS } from '../functions/runtime/index.js';
import { EVENT_TOPICS, GDPR_TOPICS } from '../webhooks/topics.js';
import { formRefusal } from './refusals.js';
import { page } from './render.js';
import { ALL_SCOPES, AppForm, appBodyOf, fieldOf, formOf, TIERS, type AppFormValues } from './app-form.js';

const developer = { roles: DEVELOPER_ROLES };
const AppParams = Type.Object({ appId: Type.String() });
const Csrf = Type.Object({ _csrf: Type.Optional(Type.String()) });

export async function appPages(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  const formPage = (request: FastifyRequest, reply: FastifyReply, options: { appId?: string; appName?: string; values: AppFormValues; errors?: Record<string, string>; status?: number }) =>
    page(deps, request, reply, 'app-form', {
      title: options.appId ? `Edit ${options.appName}` : 'Create an app',
      appId: options.appId ?? null,
      appName: options.appName ?? null,
      values: options.values,
      errors: options.errors ?? {},
      scopes: ALL_SCOPES,
      tiers: TIERS,
      topics: [...EVENT_TOPICS, ...GDPR_TOPICS],
      targets: TARGETS,
    }, options.status ?? 200);

  /** A service refusal of the form as an error on the field its message names (`fieldOf`). */
  const formErrors = (err: unknown, reply: FastifyReply): { errors: Record<string, string>; status: number } => {
    const refusal = formRefusal(err, reply, ['bad_request', 'conflict']);
    return { errors: { [fieldOf(refusal.message)]: refusal.message }, status: refusal.status };
  };

  app.get('/apps', { config: developer, schema: { querystring: PagingQuery } }, async (request, reply) => {
    const paging = parsePage(request.query, { limit: 25 });
    const { apps, total } = await listApps(deps, request.dashboardUser!, paging);
    return page(deps, request, reply, 'apps', { title: 'Your apps', apps, paged: { page: paging.page, limit: paging.limit, total } });
  });

  app.get('/apps/new', { config: developer }, async (request, reply) =>
    formPage(request, reply, { values: { scopes: [], tier: 'free', version: '1.0.0', pricingType: 'free', interval: 'month', trialDays: '0' } }));

  app.post('/apps', { config: developer, schema: { body: AppForm } }, async (request, reply) => {
    try {
      const { app: created } = await createApp(deps, request.dashboardUser!, appBodyOf(request.body, true));
      return reply.redirect(`/dashboard/apps/${created.appId}?created=1`, 303);
    } catch (err) {
      const { errors, status } = formErrors(err, reply);
      return formPage(request, reply, { values: request.body, errors, status });
    }
  });

  app.get('/apps/:appId', {
    config: developer,
    schema: { params: AppParams, querystring: Type.Object({ created: Type.Optional(Type.String()), rotated: Type.Optional(Type.String()), saved: Type.Optional(Type.String()) }) },
  }, async (request, reply) => {
    const row = await ownedApp(deps, request.dashboardUser!, request.params.appId);
    const view = appView(deps, row, { withSecret: true });
    // The overview: the API's installations of the app (newest 10) with its install and subscriber counts.
    const [{ data: installs, listed }, earnings] = await Promise.all([
      appInstallations(deps, request.dashboardUser!, row.id, { page: 1, limit: 10, offset: 0 }),
      appEarnings(deps, request.dashboardUser!.id, row.id),
    ]);
    const notice = request.query.created ? 'App created.' : request.query.rotated ? 'Client secret rotated: the old secret no longer works.' : request.query.saved ? 'Changes saved.' : null;
    return page(deps, request, reply, 'app', { title: view.name, app: view, installs, listed, earnings, notice });
  });

  app.get('/apps/:appId/edit', { config: developer, schema: { params: AppParams } }, async (request, reply) => {
    const row = await ownedApp(deps, request.dashboardUser!, request.params.appId);
    const view = appView(deps, row, { withSecret: false });
    return formPage(request, reply, { appId: view.appId, appName: view.name, values: formOf(view) });
  });

  app.post('/apps/:appId', { config: developer, schema: { params: AppParams, body: AppForm } }, async (request, reply) => {
    // Ownership first, as the API's PATCH: another developer's app is never validated against.
    const row = await ownedApp(deps, request.dashboardUser!, request.params.appId);
    try {
      await patchApp(deps, request.dashboardUser!, row.id, appBodyOf(request.body, false));
      return reply.redirect(`/dashboard/apps/${row.id}?saved=1`, 303);
    } catch (err) {
      const { errors, status } = formErrors(err, reply);
      return formPage(request, reply, { appId: row.id, appName: row.name, values: request.body, errors, status });
    }
  });

  app.get('/apps/:appId/rotate-secret', { config: developer, schema: { params: AppParams } }, async (request, reply) => {
    const row = await ownedApp(deps, request.dashboardUser!, request.params.appId);
    return page(deps, request, reply, 'rotate', { title: `Rotate the secret of ${row.name}`, app: { appId: row.id, name: row.name } });
  });

  app.post('/apps/:appId/rotate-secret', { config: developer, schema: { params: AppParams, body: Csrf } }, async (request, reply) => {
    await rotateSecret(deps, request.dashboardUser!, request.params.appId);
    return reply.redirect(`/dashboard/apps/${request.params.appId}?rotated=1`, 303);
  });
}
