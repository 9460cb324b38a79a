// App API webhook subscriptions (C6.4): bare bodies, errors-body errors. app-api.md puts them under
// read_shop ("no dedicated webhook scope"); each topic also needs its own read scope (403).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { EmptyBody, PagingQuery } from '../http/schemas.js';
import { linkHeader, parsePage } from '../http/paging.js';
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

  // A bare-body list, so paged by `page`/`limit` and the Link header like the others (C5.4); an
  // installation may hold MAX_SUBSCRIPTIONS_PER_INSTALLATION of them, more than one default page.
  api.get('/webhooks.json', {
    config: { ...config, pagedByLink: true },
    schema: {
      tags, summary: "The installation's subscriptions, newest first, without secrets; paging in the Link header (C5.4)",
      querystring: PagingQuery,
      response: { 200: Type.Object({ webhooks: Type.Array(SubscriptionSchema) }) },
    },
  }, async (request, reply) => {
    const page = parsePage(request.query);
    const { webhooks, hasNext } = await listSubscriptions(deps.db, apiCaller(request), page);
    const link = linkHeader(deps.config.baseUrl, '/api/v1/webhooks.json', {}, page, hasNext);
    if (link) reply.header('Link', link);
    return { webhooks };
  });

  api.delete('/webhooks/:id.json', {
    config,
    schema: { tags, summary: 'Delete a subscription', params: Type.Object({ id: Type.String({ description: 'the subscription id' }) }), response: { 200: EmptyBody } },
  }, async (request) => deleteSubscription(deps.db, apiCaller(request), request.params.id));
}
