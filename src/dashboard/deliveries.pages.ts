// Developer pages for webhook deliveries (C8.5, C8.6): the last 7 days' stats, the log filtered by
// status and topic and paged, one delivery with its bodies and attempts, and Redeliver. Each calls
// what the developer API's route calls (src/webhooks/delivery-log.ts) after the same ownership
// check (ownedApp).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { ownedApp } from '../apps/apps.service.js';
import { parsePage } from '../http/paging.js';
import { pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { DEVELOPER_ROLES } from '../http/user-auth.js';
import { DELIVERY_STATUSES, deliveryWindowStats, getDelivery, listDeliveries, redeliver } from '../webhooks/delivery-log.js';
import { EVENT_TOPICS, GDPR_TOPICS } from '../webhooks/topics.js';
import { page } from './render.js';

const developer = { roles: DEVELOPER_ROLES };
const STATS_DAYS = 7;
const AppParams = Type.Object({ appId: Type.String() });
const DeliveryParams = Type.Object({ appId: Type.String(), deliveryId: Type.String() });
const ListQuery = pagedQuery({ status: Type.Optional(Type.String()), topic: Type.Optional(Type.String()) });

export async function deliveryPages(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  app.get('/apps/:appId/deliveries', { config: developer, schema: { params: AppParams, querystring: ListQuery } }, async (request, reply) => {
    const row = await ownedApp(deps, request.dashboardUser!, request.params.appId);
    // An empty select is "any": the form sends it as an empty value.
    const status = request.query.status || undefined;
    const topic = request.query.topic || undefined;
    const paging = parsePage(request.query, { limit: 25 });
    const since = new Date(deps.clock.nowMs() - STATS_DAYS * 86_400_000);
    const [{ deliveries, total }, stats] = await Promise.all([
      listDeliveries(deps.db, row.id, { status, topic }, paging),
      deliveryWindowStats(deps.db, row.id, since),
    ]);
    return page(deps, request, reply, 'deliveries', {
      title: `Webhook deliveries · ${row.name}`,
      app: { appId: row.id, name: row.name },
      deliveries, stats, statsDays: STATS_DAYS,
      filters: { status: status ?? '', topic: topic ?? '' },
      statuses: DELIVERY_STATUSES,
      topics: [...EVENT_TOPICS, ...GDPR_TOPICS],
      paged: { page: paging.page, limit: paging.limit, total },
    });
  });

  app.get('/apps/:appId/deliveries/:deliveryId', {
    config: developer,
    schema: { params: DeliveryParams, querystring: Type.Object({ redelivered: Type.Optional(Type.String()) }) },
  }, async (request, reply) => {
    const row = await ownedApp(deps, request.dashboardUser!, request.params.appId);
    const { delivery } = await getDelivery(deps.db, row.id, request.params.deliveryId);
    return page(deps, request, reply, 'delivery', {
      title: `Delivery ${delivery.topic}`,
      app: { appId: row.id, name: row.name },
      delivery,
      notice: request.query.redelivered ? 'Redelivery queued: the next attempt is due now.' : null,
    });
  });

  app.post('/apps/:appId/deliveries/:deliveryId/redeliver', {
    config: developer,
    schema: { params: DeliveryParams, body: Type.Object({ _csrf: Type.Optional(Type.String()) }) },
  }, async (request, reply) => {
    const row = await ownedApp(deps, request.dashboardUser!, request.params.appId);
    const { delivery } = await redeliver(deps.db, row.id, request.params.deliveryId, deps.clock.now());
    return reply.redirect(`/dashboard/apps/${row.id}/deliveries/${delivery.deliveryId}?redelivered=1`, 303);
  });
}
