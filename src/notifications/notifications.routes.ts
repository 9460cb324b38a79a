// `GET /notifications` (C7.1, C9.5, C14.8): the store's notifications as an envelope list
// `data.notifications` with `count` and `pagination`, newest first. Registered inside the merchant
// admin surface (its gate checks the JWT and the role); the operator names the store with `storeId`.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelopeList } from '../http/shapes.js';
import type { Deps } from '../deps.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { parsePage } from '../http/paging.js';
import { envelopeListOf, pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { listNotifications, NotificationSchema } from './notifications.repo.js';

export async function notificationRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  admin.get('/notifications', {
    schema: {
      tags: ['merchant admin'],
      summary: "The store's notifications, newest first (C9.5); `type` filters (e.g. gdpr_app_failed)",
      querystring: pagedQuery({
        type: Type.Optional(Type.String({ description: 'exactly this type (trimmed; blank: every type)' })),
        storeId: Type.Optional(Type.String({ description: 'the store, for the platform operator only' })),
      }),
      response: { 200: envelopeListOf(Type.Object({ notifications: Type.Array(NotificationSchema) })) },
    },
  }, async (request) => {
    const page = parsePage(request.query);
    const type = request.query.type?.trim() || undefined;
    const { notifications, total } = await listNotifications(deps.db, adminStoreId(request), { type, limit: page.limit, offset: page.offset });
    return envelopeList({ notifications }, page, notifications.length, total);
  });
}
