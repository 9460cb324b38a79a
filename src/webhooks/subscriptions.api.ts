// App API webhook subscriptions (C6.4): bare bodies, errors-body errors. app-api.md puts them under
// read_shop ("no dedicated webhook scope"); each topic also needs its own read scope (403).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { EmptyBody } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { noStore } from '../surfaces/no-store.js';
import { createSubscription, deleteSubscription, listSubscriptions, SubscriptionBody, SubscriptionSchema } from './subscriptions.service.js';

const tags = ['webhooks'];
const config = { scope: 'read_shop' as const, shape: 'errors' as const };

export async function webhookApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  noStore(instance); // a new subscription's signing secret
  const api = typed(instance);
  api.post('/webhooks.json', {
    config: { ...config, bodyKey: 'webhook', errors: { 422: 'The topic is not subscribable, or the address is not an allowed https URL (C6.4, C8.9)' } },
    schema: {
      tags, summary: 'Subscribe to a topic (C6.4); the secret is in this response only',
      body: Type.Object(SubscriptionBody.properties, { description: 'Flat `{ topic, address }`, or wrapped as `{ webhook: { topic, address } }`' }),
      response: { 201: Type.Object({ webhook: SubscriptionSchema }) },
    },
  }, async (request, reply) => reply.code(201).send(await createSubscription(deps, apiCaller(request), request.body)));

  api.get('/webhooks.json', {
    config,
    schema: { tags, summary: "The installation's subscriptions, without secrets", response: { 200: Type.Object({ webhooks: Type.Array(SubscriptionSchema) }) } },
  }, async (request) => listSubscriptions(deps.db, apiCaller(request)));

  api.delete('/webhooks/:id.json', {
    config,
    schema: { tags, summary: 'Delete a subscription', params: Type.Object({ id: Type.String({ description: 'the subscription id' }) }), response: { 200: EmptyBody } },
  }, async (request) => deleteSubscription(deps.db, apiCaller(request), request.params.id));
}
