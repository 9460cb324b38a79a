// Store-level webhooks (C6.5), registered inside the merchant admin surface (its gate checks the
// JWT). Only the store's own roles (MERCHANT, STAFF_ADMIN, MANAGER): the operator has no store and
// gets 403 here. Envelope bodies and errors; the list carries the secrets (C6.5, C14.8).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { STORE_ROLES, callerStoreId } from '../http/user-auth.js';
import { createStoreWebhook, deleteStoreWebhook, listStoreWebhooks } from './subscriptions.service.js';

const tags = ['webhooks'];
const config = { roles: STORE_ROLES };

export async function storeWebhookRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  app.post('/webhooks', {
    config,
    schema: { tags, summary: 'Create a store-level webhook (C6.5)', body: Type.Object({ topic: Type.Optional(Type.String()), address: Type.Optional(Type.String()) }) },
  }, async (request, reply) =>
    reply.code(201).send(envelope(await createStoreWebhook(deps, callerStoreId(request), request.user!.id, request.body), 201)));

  app.get('/webhooks', { config, schema: { tags, summary: "The store's webhooks, secrets included" } }, async (request) => {
    const page = parsePage(request.query as Record<string, unknown>);
    const { webhooks, total } = await listStoreWebhooks(deps, callerStoreId(request), page);
    return envelopeList({ webhooks }, page, webhooks.length, total);
  });

  app.delete('/webhooks/:id', { config, schema: { tags, summary: 'Delete a store-level webhook', params: Type.Object({ id: Type.String() }) } },
    async (request) => {
      await deleteStoreWebhook(deps, callerStoreId(request), (request.params as { id: string }).id);
      return envelope(null);
    });
}
