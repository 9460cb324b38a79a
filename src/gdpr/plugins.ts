// The GDPR area's route groups for src/app.ts: the app routes (their own token gate) at the root,
// and the merchant admin routes with the merchant notifications inside the merchant admin surface.
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { gdprAdminRoutes, gdprAppRoutes } from './gdpr.routes.js';
import { notificationRoutes } from '../notifications/notifications.routes.js';

export async function gdprRootRoutes(app: FastifyInstance, opts: { deps: Deps }) {
  await app.register(gdprAppRoutes, opts);
}

export async function gdprAdminAreaRoutes(admin: FastifyInstance, opts: { deps: Deps }) {
  await admin.register(gdprAdminRoutes, opts);
  await admin.register(notificationRoutes, opts);
}
