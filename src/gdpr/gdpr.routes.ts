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
import { longerThan } from '../text.js';
import { parsePage } from '../http/paging.js';
import { envelopeListOf, envelopeOf, nullable, pagedQuery, StringEnum } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { GdprRequestSchema, REQUEST_STATUSES, REQUEST_TYPES, type GdprRequestType } from './gdpr.repo.js';
import { appGdprAction, createGdprRequest, CreatedRequestSchema, getGdprRequest, listGdprRequests, type GdprRequestInput } from './gdpr.service.js';
import { gdprDispatcher } from './gdpr.dispatch.js';

/** app-api.md Limits: the GDPR request list's page size. */
export const GDPR_PAGE_LIMIT = 20;

const tags = ['gdpr'];

/** A text field of a request; trimmed, blank reads as absent (gdpr.service.ts `optionalText`). */
const text = (description: string) => Type.Optional(nullable(Type.String({ description })));
/** The operator names the store (C7.1); store staff act for their own and their `storeId` is ignored. */
const storeId = Type.Optional(Type.String({ description: 'the platform operator only: the store the request is for (a store id)', 'x-error': 'must be a store id' }));
const storeIdQuery = Type.Object({ storeId: Type.Optional(Type.String({ description: 'the platform operator only: the store (a store id), here or as `storeId` in a JSON body' })) });
const createdBody = envelopeOf(CreatedRequestSchema);
const requestBody = envelopeOf(GdprRequestSchema);

/** A filter of the list: one of `values`; blank means no filter. */
const filter = <const V extends readonly string[]>(values: V) =>
  Type.Optional(Type.Unsafe<'' | V[number]>(StringEnum(['', ...values], { description: `one of ${values.join(', ')}; blank: all`, 'x-error': `must be one of ${values.join(', ')}` })));

const afterSent = new WeakMap<FastifyRequest, () => void>();

/** A promise that resolves once the response has gone out (or the connection is gone). */
function responseSent(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  return new Promise<void>((resolve) => {
    afterSent.set(request, resolve);
    reply.raw.once('close', () => resolve());
  });
}

export async function gdprAdminRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  admin.addHook('onResponse', async (request) => afterSent.get(request)?.());
  const dispatcher = gdprDispatcher(deps);
  admin.addHook('onClose', async () => dispatcher.settle());

  const create = async (request: FastifyRequest, reply: FastifyReply, type: GdprRequestType, input: GdprRequestInput) => {
    const created = await createGdprRequest(deps, adminStoreId(request), type, input, request.user!.id);
    // C9.1: the webhooks go out after the response; the merchant does not wait for the apps.
    dispatcher.dispatchAfter(responseSent(request, reply), created.requestId, created.deliveryIds);
    return reply.code(201).send(envelope(created.data, 201));
  };

  admin.post('/apps/gdpr/data-request', {
    config: { errors: { 404: 'customerId names no customer of the store' } },
    schema: {
      tags,
      summary: "Request a customer's data from every app installed on the store (customers/data_request)",
      description: 'At least one of `customerId`, `customerEmail` and `customerPhone` (400 without); a `customerId` of no customer of the store is a 404.',
      body: Type.Object({
        customerId: text("the customer's id (at most 100 characters); their email and phone fill in the ones not given"),
        customerEmail: text('an email address (at most 320 characters); matched to a customer of the store, any case, when there is one'),
        customerPhone: text('a phone number, at most 64 characters'),
        ordersRequested: Type.Optional(nullable(Type.Boolean({ description: 'whether the apps should include the customer\'s orders (default true)' }), { 'x-error': 'must be a boolean' })),
        storeId,
      }),
      response: { 201: createdBody },
    },
  }, async (request, reply) => create(request, reply, 'data_request', request.body));

  admin.post('/apps/gdpr/customer-redact', {
    config: { errors: { 404: 'customerId names no customer of the store' } },
    schema: {
      tags,
      summary: "Have every app installed on the store erase a customer's data (customers/redact); the platform erases its own copy once every app completed or failed",
      description: '`customerId` or `customerEmail` (400 without); a `customerId` of no customer of the store is a 404.',
      body: Type.Object({
        customerId: text('the customer\'s id (at most 100 characters)'),
        customerEmail: text('an email address (at most 320 characters); its orders without a customer are redacted too'),
        storeId,
      }),
      response: { 201: createdBody },
    },
  }, async (request, reply) => create(request, reply, 'customer_redact', request.body));

  admin.post('/apps/gdpr/shop-redact', {
    schema: { tags, summary: "Have every app installed on the store erase the shop's data (shop/redact); no body", querystring: storeIdQuery, response: { 201: createdBody } },
  }, async (request, reply) => create(request, reply, 'shop_redact', {}));

  admin.get('/apps/gdpr/requests', {
    schema: {
      tags,
      summary: "The store's GDPR requests, newest first, each with its apps' states; page size 20 by default",
      querystring: pagedQuery({ status: filter(REQUEST_STATUSES), requestType: filter(REQUEST_TYPES), storeId: storeIdQuery.properties.storeId }),
      response: { 200: envelopeListOf(Type.Object({ requests: Type.Array(GdprRequestSchema) })) },
    },
  }, async (request) => {
    const page = parsePage(request.query, { limit: GDPR_PAGE_LIMIT });
    const { requests, total } = await listGdprRequests(deps, adminStoreId(request), {
      status: request.query.status || undefined, requestType: request.query.requestType || undefined, limit: page.limit, offset: page.offset,
    });
    return envelopeList({ requests }, page, requests.length, total);
  });

  admin.get('/apps/gdpr/requests/:requestId', {
    schema: {
      tags, summary: 'One GDPR request with every notified app\'s acknowledgment state', params: Type.Object({ requestId: Type.String({ description: 'the request id' }) }),
      response: { 200: requestBody },
    },
  }, async (request) => {
    const { storeId, view } = await getGdprRequest(deps, request.params.requestId);
    assertStoreAccess(request, storeId);
    return envelope(view);
  });
}

export async function gdprAppRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);
  const params = Type.Object({ requestId: Type.String({ description: 'the request id, from the webhook body' }) });

  app.post('/apps/gdpr/acknowledge/:requestId', {
    config: { errors: { 409: 'This app already failed the request (its deadline passed, C9.3)' } },
    schema: { tags, summary: 'The app acknowledges a GDPR request it was notified of (within 30 days); no body', params, response: { 200: requestBody } },
  }, async (request) => envelope(await appGdprAction(deps, apiCaller(request), request.params.requestId, 'acknowledge')));

  app.post('/apps/gdpr/complete/:requestId', {
    config: { errors: { 409: 'This app already failed the request (its deadline passed, C9.3)' } },
    schema: {
      tags, params,
      summary: 'The app completes a GDPR request (within 90 days); `dataExportUrl` for data requests is shown to the merchant',
      // No body at all is a completion without an export.
      body: Type.Unsafe<{ dataExportUrl?: string | null } | null>({
        type: ['object', 'null'],
        description: 'Optional: no body, or no `dataExportUrl`, completes without an export',
        properties: {
          dataExportUrl: {
            type: ['string', 'null'],
            description: 'an absolute http(s) URL of at most 2048 characters (trimmed); null or absent: none',
            'x-error': 'must be an absolute http(s) URL',
          },
        },
      }),
      response: { 200: requestBody },
    },
  }, async (request) => {
    const given = request.body?.dataExportUrl;
    let url: string | null = null;
    if (given !== undefined && given !== null) {
      url = given.trim();
      if (!isHttpUrl(url) || longerThan(url, 2048)) throw badRequest('dataExportUrl must be an absolute http(s) URL');
    }
    return envelope(await appGdprAction(deps, apiCaller(request), request.params.requestId, 'complete', url));
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
