// Developer API: `/apps/developer/{appId}/webhook-deliveries...` (C8.5, C8.6), registered in the
// developer surface (src/surfaces/developer.ts). The caller must own the app: another developer's app is 403, an unknown one 404 (ownedApp).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { ownedApp } from '../apps/apps.service.js';
import { parsePage } from '../http/paging.js';
import { envelopeListOf, envelopeOf, pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { DELIVERY_STATUSES, DeliverySchema, DeliveryStatsSchema, deliveryStats, getDelivery, listDeliveries, redeliver } from './delivery-log.js';

const tags = ['webhooks'];
const appId = Type.String({ description: 'the app id' });
const appParams = Type.Object({ appId });
const deliveryParams = Type.Object({ appId, deliveryId: Type.String({ description: 'the delivery id' }) });
const deliveryBody = Type.Object({ delivery: DeliverySchema });

export async function deliveryLogRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);
  const base = '/apps/developer/:appId/webhook-deliveries';

  app.get(base, {
    schema: {
      tags, params: appParams, summary: "The app's webhook deliveries, newest first (C8.5)",
      // `status` is checked by the handler, after the app's ownership (403/404 before a 400).
      querystring: pagedQuery({
        status: Type.Optional(Type.String({ description: `one of ${DELIVERY_STATUSES.join(', ')} (another value -> 400)` })),
        topic: Type.Optional(Type.String({ description: 'a topic, e.g. orders/create' })),
      }),
      response: { 200: envelopeListOf(Type.Object({ deliveries: Type.Array(DeliverySchema) })) },
    },
  }, async (request) => {
    const appRow = await ownedApp(deps, request.user!, request.params.appId);
    const { status, topic } = request.query;
    const page = parsePage(request.query);
    const { deliveries, total } = await listDeliveries(deps.db, appRow.id, { status, topic }, page);
    return envelopeList({ deliveries }, page, deliveries.length, total);
  });

  app.get(`${base}/stats`, {
    schema: { tags, params: appParams, summary: 'Delivery counts by status (C8.6)', response: { 200: envelopeOf(DeliveryStatsSchema) } },
  }, async (request) => {
    const appRow = await ownedApp(deps, request.user!, request.params.appId);
    return envelope(await deliveryStats(deps.db, appRow.id));
  });

  app.get(`${base}/:deliveryId`, {
    schema: { tags, params: deliveryParams, summary: 'One delivery with its attempts', response: { 200: envelopeOf(deliveryBody) } },
  }, async (request) => {
    const { appId, deliveryId } = request.params;
    const appRow = await ownedApp(deps, request.user!, appId);
    return envelope(await getDelivery(deps.db, appRow.id, deliveryId));
  });

  app.post(`${base}/:deliveryId/redeliver`, {
    config: { errors: { 409: 'An attempt of this delivery is in progress, or its body was pruned by retention (C14.10)' } },
    schema: { tags, params: deliveryParams, summary: 'Attempt the same delivery again now (C8.5, C14.10)', response: { 202: envelopeOf(deliveryBody) } },
  }, async (request, reply) => {
    const { appId, deliveryId } = request.params;
    const appRow = await ownedApp(deps, request.user!, appId);
    return reply.code(202).send(envelope(await redeliver(deps.db, appRow.id, deliveryId, deps.clock.now()), 202));
  });
}
