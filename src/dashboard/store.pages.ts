// Merchant pages (issue 15; the store's MERCHANT, STAFF_ADMIN and MANAGER, as the store-staff and
// merchant-admin surfaces admit them, without the operator): installed apps with install (C4.1)
// and uninstall (C4.7), the store's functions (C11.2), GDPR requests (C9.1). Each calls the service
// the API's route calls, for the signed-in user's own store.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { authorize, listInstallations, storeInstallation, uninstall } from '../oauth/oauth.service.js';
import { changeFunction, storeFunctions } from '../functions/store-functions.js';
import { createGdprRequest, getGdprRequest, listGdprRequests } from '../gdpr/gdpr.service.js';
import { gdprDispatcher } from '../gdpr/gdpr.dispatch.js';
import { REQUEST_STATUSES, REQUEST_TYPES, type GdprRequestType } from '../gdpr/gdpr.repo.js';
import { GDPR_PAGE_LIMIT } from '../gdpr/gdpr.routes.js';
import { badRequest, notFound } from '../http/errors.js';
import { parseJsonField } from '../http/input-guard.js';
import { parsePage } from '../http/paging.js';
import { pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { STORE_ROLES } from '../http/user-auth.js';
import { formRefusal } from './refusals.js';
import { page } from './render.js';

const merchant = { roles: STORE_ROLES };
const Csrf = Type.Object({ _csrf: Type.Optional(Type.String()) });
const text = Type.Optional(Type.String());

/** The signed-in user's store: every store role has one (STORE_ROLES). */
const storeOf = (request: FastifyRequest) => {
  const storeId = request.dashboardUser?.storeId;
  if (!storeId) throw notFound('No store');
  return storeId;
};

/** A list filter: blank is none; another value than `values` is refused as the API's query schema refuses it. */
function filterOf<const V extends readonly string[]>(name: string, value: string | undefined, values: V): V[number] | undefined {
  if (!value) return undefined;
  if (!values.includes(value)) throw badRequest(`${name} must be one of ${values.join(', ')}`);
  return value;
}

/** What a store page's form shows of a service refusal (the rest goes to the error page). */
const STORE_FORM_REFUSALS = ['bad_request', 'conflict', 'not_found'] as const;

export async function storePages(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  // --- installed apps ------------------------------------------------------------------------

  const appsPage = async (request: FastifyRequest, reply: FastifyReply, query: { page?: unknown; limit?: unknown; uninstalled?: string }, install: { clientId: string; scope: string; error: string | null }, status = 200) => {
    const paging = parsePage(query, { limit: 25 });
    const { installations, total } = await listInstallations(deps, storeOf(request), paging);
    return page(deps, request, reply, 'store-apps', {
      title: 'Installed apps', installations, install, paged: { page: paging.page, limit: paging.limit, total },
      notice: query.uninstalled ? 'App uninstalled: its access tokens no longer work and its functions stopped.' : null,
    }, status);
  };

  app.get('/store/apps', { config: merchant, schema: { querystring: pagedQuery({ uninstalled: text }) } }, async (request, reply) =>
    appsPage(request, reply, request.query, { clientId: '', scope: '', error: null }));

  // C4.1: the answer is where the merchant's browser goes next (the app, with the signed handoff).
  app.post('/store/apps/install', { config: merchant, schema: { body: Type.Object({ _csrf: text, clientId: text, scope: text }) } }, async (request, reply) => {
    const clientId = (request.body.clientId ?? '').trim();
    const scope = (request.body.scope ?? '').trim();
    try {
      const { redirectUrl } = await authorize(deps, storeOf(request), { client_id: clientId || undefined, scope: scope || undefined });
      return page(deps, request, reply, 'store-install', { title: 'Continue the install', redirectUrl });
    } catch (err) {
      const e = formRefusal(err, reply, STORE_FORM_REFUSALS);
      return appsPage(request, reply, {}, { clientId, scope, error: e.message }, e.status);
    }
  });

  app.get('/store/apps/:installationId/uninstall', { config: merchant, schema: { params: Type.Object({ installationId: Type.String() }) } }, async (request, reply) => {
    const installation = await storeInstallation(deps, storeOf(request), request.params.installationId);
    if (installation.status === 'uninstalled') throw notFound('Installation not found');
    return page(deps, request, reply, 'store-uninstall', { title: `Uninstall ${installation.app?.name ?? 'the app'}`, installation });
  });

  app.post('/store/apps/:installationId/uninstall', { config: merchant, schema: { params: Type.Object({ installationId: Type.String() }), body: Csrf } }, async (request, reply) => {
    // The dashboard's pages do not tell another store's installation from an unknown one (404), as
    // its confirmation page does; the API's route answers 403 for it (C7.1).
    await storeInstallation(deps, storeOf(request), request.params.installationId);
    await uninstall(deps, storeOf(request), request.params.installationId);
    return reply.redirect('/dashboard/store/apps?uninstalled=1', 303);
  });

  // --- functions (C11.2) ---------------------------------------------------------------------

  const FunctionParams = Type.Object({ functionId: Type.String() });

  const functionsPage = async (request: FastifyRequest, reply: FastifyReply, error: string | null, status = 200) => {
    const { functions } = await storeFunctions(deps, storeOf(request));
    return page(deps, request, reply, 'store-functions', { title: 'Functions', functions, error }, status);
  };

  app.get('/store/functions', { config: merchant }, async (request, reply) => functionsPage(request, reply, null));

  app.post('/store/functions/:functionId/active', {
    config: merchant,
    schema: { params: FunctionParams, body: Type.Object({ _csrf: text, active: text }) },
  }, async (request, reply) => {
    try {
      await changeFunction(deps, storeOf(request), request.params.functionId, { active: request.body.active === 'true' });
    } catch (err) {
      const e = formRefusal(err, reply, STORE_FORM_REFUSALS);
      if (e.kind === 'not_found') throw e;
      return functionsPage(request, reply, e.message, e.status);
    }
    return reply.redirect('/dashboard/store/functions', 303);
  });

  const functionPage = async (request: FastifyRequest, reply: FastifyReply, functionId: string, form: { configuration: string; error: string | null } | null, status = 200, notice: string | null = null) => {
    const { functions } = await storeFunctions(deps, storeOf(request));
    const fn = functions.find((f) => f.functionId === functionId);
    if (!fn) throw notFound('Function not found');
    return page(deps, request, reply, 'store-function', {
      title: `Configure ${fn.title ?? fn.handle}`, fn,
      configuration: form?.configuration ?? JSON.stringify(fn.configuration, null, 2), error: form?.error ?? null, notice,
    }, status);
  };

  app.get('/store/functions/:functionId', { config: merchant, schema: { params: FunctionParams, querystring: Type.Object({ saved: text }) } }, async (request, reply) =>
    functionPage(request, reply, request.params.functionId, null, 200, request.query.saved ? 'Configuration saved.' : null));

  app.post('/store/functions/:functionId/configuration', {
    config: merchant,
    schema: { params: FunctionParams, body: Type.Object({ _csrf: text, configuration: text, reset: text }) },
  }, async (request, reply) => {
    const given = request.body.configuration ?? '';
    try {
      let configuration: unknown = null; // "Use the app's configuration": null, as the API takes it
      if (!request.body.reset) configuration = parseJsonField(given, 'configuration');
      await changeFunction(deps, storeOf(request), request.params.functionId, { configuration });
    } catch (err) {
      const e = formRefusal(err, reply, STORE_FORM_REFUSALS);
      if (e.kind === 'not_found') throw e;
      return functionPage(request, reply, request.params.functionId, { configuration: given, error: e.message }, e.status);
    }
    return reply.redirect(`/dashboard/store/functions/${request.params.functionId}?saved=1`, 303);
  });

  // --- GDPR (C9.1) ---------------------------------------------------------------------------

  const dispatcher = gdprDispatcher(deps);
  const sent = new WeakMap<FastifyRequest, () => void>();
  instance.addHook('onResponse', async (request) => sent.get(request)?.());
  const GdprQuery = pagedQuery({ status: text, requestType: text });
  const GdprForm = Type.Object({ _csrf: text, customerId: text, customerEmail: text, customerPhone: text, ordersRequested: text, confirm: text });

  const gdprPage = async (request: FastifyRequest, reply: FastifyReply, query: { page?: unknown; limit?: unknown; status?: string; requestType?: string }, form: { kind: string; values: Record<string, string | undefined>; error: string } | null, status = 200) => {
    // As `GET /apps/gdpr/requests`: blank is no filter, an unknown value a 400 in the API's words
    // (the page used to show every request for it, as if no filter had been asked for).
    const statusFilter = filterOf('status', query.status, REQUEST_STATUSES);
    const typeFilter = filterOf('requestType', query.requestType, REQUEST_TYPES);
    const paging = parsePage(query, { limit: GDPR_PAGE_LIMIT });
    const { requests, total } = await listGdprRequests(deps, storeOf(request), { status: statusFilter, requestType: typeFilter, limit: paging.limit, offset: paging.offset });
    return page(deps, request, reply, 'store-gdpr', {
      title: 'GDPR requests', requests, form,
      filters: { status: statusFilter ?? '', requestType: typeFilter ?? '' },
      statuses: REQUEST_STATUSES, types: REQUEST_TYPES,
      paged: { page: paging.page, limit: paging.limit, total },
    }, status);
  };

  app.get('/store/gdpr', { config: merchant, schema: { querystring: GdprQuery } }, async (request, reply) => gdprPage(request, reply, request.query, null));

  const KINDS: Record<string, GdprRequestType> = { 'data-request': 'data_request', 'customer-redact': 'customer_redact', 'shop-redact': 'shop_redact' };
  app.post('/store/gdpr/:kind', { config: merchant, schema: { params: Type.Object({ kind: Type.String() }), body: GdprForm } }, async (request, reply) => {
    const type = KINDS[request.params.kind];
    if (!type) throw notFound('No such request kind');
    const body = request.body;
    const blank = (v: string | undefined) => (v && v.trim() ? v.trim() : undefined);
    try {
      if (type === 'shop_redact' && body.confirm !== 'on') throw badRequest('confirm that every installed app is to erase the shop\'s data');
      const created = await createGdprRequest(deps, storeOf(request), type, {
        customerId: blank(body.customerId), customerEmail: blank(body.customerEmail), customerPhone: blank(body.customerPhone),
        ...(type === 'data_request' ? { ordersRequested: body.ordersRequested === 'on' } : {}),
      }, request.dashboardUser!.id);
      // C9.1: the webhooks go out after the response, as from the API's route.
      dispatcher.dispatchAfter(new Promise<void>((resolve) => {
        sent.set(request, resolve);
        reply.raw.once('close', () => resolve());
      }), created.requestId, created.deliveryIds);
      return reply.redirect(`/dashboard/store/gdpr/${created.requestId}?created=1`, 303);
    } catch (err) {
      const e = formRefusal(err, reply, STORE_FORM_REFUSALS);
      return gdprPage(request, reply, {}, { kind: request.params.kind, values: body, error: e.message }, e.status);
    }
  });

  app.get('/store/gdpr/:requestId', {
    config: merchant,
    schema: { params: Type.Object({ requestId: Type.String() }), querystring: Type.Object({ created: text }) },
  }, async (request, reply) => {
    const { storeId, view } = await getGdprRequest(deps, request.params.requestId);
    if (storeId !== storeOf(request)) throw notFound('GDPR request not found');
    return page(deps, request, reply, 'store-gdpr-request', { title: 'GDPR request', request: view, notice: request.query.created ? 'Request filed: the installed apps are notified now.' : null });
  });
}
