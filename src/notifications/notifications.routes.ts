// `GET /notifications` (C7.1, C9.5, C14.8): the store's notifications as an envelope list
// `data.notifications` with `count` and `pagination`, newest first. Registered inside the merchant
// admin surface (its gate checks the JWT and the role); the operator names the store with `storeId`.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { parsePage } from '../http/paging.js';
import { envelopeList } from '../http/shapes.js';
import { listNotifications } from './notifications.repo.js';

export async function notificationRoutes(admin: FastifyInstance, { deps }: { deps: Deps }) {
  admin.get('/notifications', {
    schema: {
      tags: ['merchant admin'],
      summary: "The store's notifications, newest first (C9.5); `type` filters (e.g. gdpr_app_failed)",
      querystring: Type.Object({
        page: Type.Optional(Type.String()),
        limit: Type.Optional(Type.String()),
        type: Type.Optional(Type.String()),
        storeId: Type.Optional(Type.String()),
      }),
    },
  }, async (request) => {
    const query = request.query as Record<string, string | undefined>;
    const page = parsePage(query);
    const type = query.type?.trim() || undefined;
    const { notifications, total } = await listNotifications(deps.db, adminStoreId(request), { type, limit: page.limit, offset: page.offset });
    return envelopeList({ notifications }, page, notifications.length, total);
  });
}
