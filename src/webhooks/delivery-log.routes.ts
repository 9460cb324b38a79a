// Developer API: `/apps/developer/{appId}/webhook-deliveries...` (C8.5, C8.6), registered in the
// developer surface (src/surfaces/developer.ts). The caller must own the app: another developer's app is 403, an unknown one 404 (ownedApp).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { ownedApp } from '../apps/apps.service.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { deliveryStats, getDelivery, listDeliveries, redeliver } from './delivery-log.js';

const tags = ['webhooks'];
const appParams = Type.Object({ appId: Type.String() });
const deliveryParams = Type.Object({ appId: Type.String(), deliveryId: Type.String() });

export async function deliveryLogRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  const base = '/apps/developer/:appId/webhook-deliveries';

  app.get(base, {
    schema: {
      tags, params: appParams, summary: "The app's webhook deliveries, newest first (C8.5)",
      querystring: Type.Object({ page: Type.Optional(Type.String()), limit: Type.Optional(Type.String()), status: Type.Optional(Type.String()), topic: Type.Optional(Type.String()) }),
    },
  }, async (request) => {
    const appRow = await ownedApp(deps, request.user!, (request.params as { appId: string }).appId);
    const query = request.query as Record<string, string | undefined>;
    const page = parsePage(query);
    const { deliveries, total } = await listDeliveries(deps.db, appRow.id, { status: query.status, topic: query.topic }, page);
    return envelopeList({ deliveries }, page, deliveries.length, total);
  });

  app.get(`${base}/stats`, { schema: { tags, params: appParams, summary: 'Delivery counts by status (C8.6)' } }, async (request) => {
    const appRow = await ownedApp(deps, request.user!, (request.params as { appId: string }).appId);
    return envelope(await deliveryStats(deps.db, appRow.id));
  });

  app.get(`${base}/:deliveryId`, { schema: { tags, params: deliveryParams, summary: 'One delivery with its attempts' } }, async (request) => {
    const { appId, deliveryId } = request.params as { appId: string; deliveryId: string };
    const appRow = await ownedApp(deps, request.user!, appId);
    return envelope(await getDelivery(deps.db, appRow.id, deliveryId));
  });

  app.post(`${base}/:deliveryId/redeliver`, {
    schema: { tags, params: deliveryParams, summary: 'Attempt the same delivery again now (C8.5, C14.10)' },
  }, async (request, reply) => {
    const { appId, deliveryId } = request.params as { appId: string; deliveryId: string };
    const appRow = await ownedApp(deps, request.user!, appId);
    return reply.code(202).send(envelope(await redeliver(deps.db, appRow.id, deliveryId, deps.clock.now()), 202));
  });
}
