// App API webhook subscriptions (C6.4): bare bodies, errors-body errors. app-api.md puts them under
// read_shop ("no dedicated webhook scope"); each topic also needs its own read scope (403).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { createSubscription, deleteSubscription, listSubscriptions } from './subscriptions.service.js';

const tags = ['webhooks'];
const config = { scope: 'read_shop' as const, shape: 'errors' as const };

export async function webhookApiRoutes(api: FastifyInstance, { deps }: { deps: Deps }) {
  api.post('/webhooks.json', {
    config,
    schema: {
      tags, summary: 'Subscribe to a topic (C6.4); the secret is in this response only',
      body: Type.Object({}, { additionalProperties: true, description: '{ webhook: { topic, address } } or { topic, address }' }),
    },
  }, async (request, reply) => reply.code(201).send(await createSubscription(deps, apiCaller(request), request.body)));

  api.get('/webhooks.json', { config, schema: { tags, summary: "The installation's subscriptions, without secrets" } },
    async (request) => listSubscriptions(deps.db, apiCaller(request)));

  api.delete('/webhooks/:id.json', { config, schema: { tags, summary: 'Delete a subscription', params: Type.Object({ id: Type.String() }) } },
    async (request) => deleteSubscription(deps.db, apiCaller(request), (request.params as { id: string }).id));
}
