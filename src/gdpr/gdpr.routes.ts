// GDPR routes (app-api.md GDPR routes; C9.1, C9.2, C14.8). Envelope bodies and errors throughout.
//   merchant admin (registered in the merchant admin surface, whose gate checks the JWT and role):
//     POST /apps/gdpr/data-request | customer-redact | shop-redact   -> 201, webhooks after the response
//     GET  /apps/gdpr/requests, GET /apps/gdpr/requests/{requestId}
//   app (registered in the app-token surface, whose gate checks the app's access token):
//     POST /apps/gdpr/acknowledge/{requestId}, POST /apps/gdpr/complete/{requestId}
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { adminStoreId, assertStoreAccess } from '../surfaces/merchant-admin.js';
import { apiCaller } from '../surfaces/app-api.js';
import { badRequest } from '../http/errors.js';
import { useBoundedJson } from '../http/input-guard.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { REQUEST_STATUSES, REQUEST_TYPES, type GdprRequestStatus, type GdprRequestType } from './gdpr.repo.js';
import { appGdprAction, createGdprRequest, getGdprRequest, listGdprRequests } from './gdpr.service.js';
import { gdprDispatcher } from './gdpr.dispatch.js';

/** app-api.md Limits: the GDPR request list's page size. */
export const GDPR_PAGE_LIMIT = 20;

const tags = ['gdpr'];
const optionalString = Type.Optional(Type.Union([Type.String(), Type.Null()]));

/**
 * Bodies are optional here (acknowledge and shop-redact take none), and many HTTP clients send
 * `Content-Type: application/json` with an empty body: read that as `{}` rather than refuse it.
 * Otherwise the same bounded, checked parse as everywhere (src/http/input-guard.ts).
 */
function lenientJson(app: FastifyInstance) {
  useBoundedJson(app, { empty: () => ({}) });
}

const afterSent = new WeakMap<FastifyRequest, () => void>();

/** A promise that resolves once the response has gone out (or the connection is gone). */
function responseSent(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  return new Promise<void>((resolve) => {
    afterSent.set(request, resolve);
    reply.raw.once('close', () => resolve());
  });
}

export async function gdprAdminRoutes(admin: FastifyInstance, { deps }: { deps: Deps }) {
  lenientJson(admin);
  admin.addHook('onResponse', async (request) => afterSent.get(request)?.());
  const dispatcher = gdprDispatcher(deps);
  admin.addHook('onClose', async () => dispatcher.settle());

  const create = (type: GdprRequestType) => async (request: FastifyRequest, reply: FastifyReply) => {
    const created = await createGdprRequest(deps, adminStoreId(request), type, (request.body ?? {}) as Record<string, unknown>, request.user!.id);
    // C9.1: the webhooks go out after the response; the merchant does not wait for the apps.
    dispatcher.dispatchAfter(responseSent(request, reply), created.requestId, created.deliveryIds);
    return reply.code(201).send(envelope(created.data, 201));
  };

  admin.post('/apps/gdpr/data-request', {
    schema: {
      tags,
      summary: "Request a customer's data from every app installed on the store (customers/data_request)",
      body: Type.Object({ customerId: optionalString, customerEmail: optionalString, customerPhone: optionalString, ordersRequested: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])), storeId: Type.Optional(Type.String()) }),
    },
  }, create('data_request'));

  admin.post('/apps/gdpr/customer-redact', {
    schema: {
      tags,
      summary: "Have every app installed on the store erase a customer's data (customers/redact); the platform erases its own copy once every app completed or failed",
      body: Type.Object({ customerId: optionalString, customerEmail: optionalString, storeId: Type.Optional(Type.String()) }),
    },
  }, create('customer_redact'));

  admin.post('/apps/gdpr/shop-redact', {
    schema: { tags, summary: "Have every app installed on the store erase the shop's data (shop/redact); no body" },
  }, create('shop_redact'));

  admin.get('/apps/gdpr/requests', {
    schema: {
      tags,
      summary: "The store's GDPR requests, newest first, each with its apps' states; page size 20 by default",
      querystring: Type.Object({
        page: Type.Optional(Type.String()), limit: Type.Optional(Type.String()),
        status: Type.Optional(Type.String()), requestType: Type.Optional(Type.String()), storeId: Type.Optional(Type.String()),
      }),
    },
  }, async (request) => {
    const query = request.query as Record<string, string | undefined>;
    const page = parsePage(query, { limit: GDPR_PAGE_LIMIT });
    const status = query.status || undefined;
    const requestType = query.requestType || undefined;
    if (status !== undefined && !(REQUEST_STATUSES as readonly string[]).includes(status)) throw badRequest(`status must be one of ${REQUEST_STATUSES.join(', ')}`);
    if (requestType !== undefined && !(REQUEST_TYPES as readonly string[]).includes(requestType)) throw badRequest(`requestType must be one of ${REQUEST_TYPES.join(', ')}`);
    const { requests, total } = await listGdprRequests(deps, adminStoreId(request), {
      status: status as GdprRequestStatus | undefined, requestType: requestType as GdprRequestType | undefined, limit: page.limit, offset: page.offset,
    });
    return envelopeList({ requests }, page, requests.length, total);
  });

  admin.get('/apps/gdpr/requests/:requestId', {
    schema: { tags, summary: 'One GDPR request with every notified app\'s acknowledgment state', params: Type.Object({ requestId: Type.String() }) },
  }, async (request) => {
    const { storeId, view } = await getGdprRequest(deps, (request.params as { requestId: string }).requestId);
    assertStoreAccess(request, storeId);
    return envelope(view);
  });
}

export async function gdprAppRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  lenientJson(app);
  const params = Type.Object({ requestId: Type.String() });

  app.post('/apps/gdpr/acknowledge/:requestId', {
    schema: { tags, summary: 'The app acknowledges a GDPR request it was notified of (within 30 days)', params },
  }, async (request) => envelope(await appGdprAction(deps, apiCaller(request), (request.params as { requestId: string }).requestId, 'acknowledge')));

  app.post('/apps/gdpr/complete/:requestId', {
    schema: {
      tags, params,
      summary: 'The app completes a GDPR request (within 90 days); `dataExportUrl` for data requests is shown to the merchant',
    },
  }, async (request) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    let url: string | null = null;
    if (body.dataExportUrl !== undefined && body.dataExportUrl !== null) {
      url = typeof body.dataExportUrl === 'string' ? body.dataExportUrl.trim() : '';
      if (!isHttpUrl(url) || url.length > 2048) throw badRequest('dataExportUrl must be an absolute http(s) URL');
    }
    return envelope(await appGdprAction(deps, apiCaller(request), (request.params as { requestId: string }).requestId, 'complete', url));
  });
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}
