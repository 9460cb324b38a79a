// Store-level webhooks (C6.5), registered inside the merchant admin surface (its gate checks the
// JWT). Only the store's own roles (MERCHANT, STAFF_ADMIN, MANAGER): the operator has no store and
// gets 403 here. Envelope bodies and errors; the list carries the secrets (C6.5, C14.8).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { parsePage } from '../http/paging.js';
import { envelopeListOf, envelopeOf, PagingQuery } from '../http/schemas.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { typed } from '../http/typed.js';
import { STORE_ROLES, callerStoreId } from '../http/user-auth.js';
import { noStore } from '../surfaces/no-store.js';
import { createStoreWebhook, deleteStoreWebhook, listStoreWebhooks, StoreWebhookSchema, SubscriptionBody } from './subscriptions.service.js';

const tags = ['webhooks'];
const config = { roles: STORE_ROLES };

export async function storeWebhookRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  noStore(instance); // the webhooks' signing secrets (create and list)
  const app = typed(instance);
  app.post('/webhooks', {
    config: { ...config, bodyKey: 'webhook', errors: { 422: 'The topic is not subscribable, or the address is not an allowed https URL (C6.5, C8.9)' } },
    schema: {
      tags, summary: 'Create a store-level webhook (C6.5)',
      body: Type.Object(SubscriptionBody.properties, { description: 'Flat `{ topic, address }`, or wrapped as `{ webhook: { topic, address } }`; the GDPR topics are not open to a store' }),
      response: { 201: envelopeOf(Type.Object({ webhook: StoreWebhookSchema })) },
    },
  }, async (request, reply) =>
    reply.code(201).send(envelope(await createStoreWebhook(deps, callerStoreId(request), request.user!.id, request.body), 201)));

  app.get('/webhooks', {
    config,
    schema: {
      tags, summary: "The store's webhooks, secrets included", querystring: PagingQuery,
      response: { 200: envelopeListOf(Type.Object({ webhooks: Type.Array(StoreWebhookSchema) })) },
    },
  }, async (request) => {
    const page = parsePage(request.query);
    const { webhooks, total } = await listStoreWebhooks(deps, callerStoreId(request), page);
    return envelopeList({ webhooks }, page, webhooks.length, total);
  });

  app.delete('/webhooks/:id', {
    config,
    schema: {
      tags, summary: 'Delete a store-level webhook', params: Type.Object({ id: Type.String({ description: 'the webhook id' }) }),
      response: { 200: envelopeOf(Type.Null()) },
    },
  }, async (request) => {
    await deleteStoreWebhook(deps, callerStoreId(request), request.params.id);
    return envelope(null);
  });
}
