// The order area's routes, grouped by the surface they are registered on (src/app.ts): App API
// (orders, fulfillments, sales analytics; inside the /api/v1 gate), merchant admin (order routes;
// inside its gate), and the root (storefront events and order status, no credential; the email log,
// with its own SUPER_ADMIN hook).
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { analyticsApiRoutes } from '../analytics/analytics.api.js';
import { fulfillmentApiRoutes } from '../fulfillments/fulfillments.api.js';
import { emailLogRoutes } from '../mail/emails.routes.js';
import { storefrontRoutes } from '../storefront/storefront.routes.js';
import { orderAdminRoutes } from './orders.admin.js';
import { orderApiRoutes } from './orders.api.js';

type Opts = { deps: Deps };

export async function orderAreaApiRoutes(api: FastifyInstance, { deps }: Opts) {
  await api.register(orderApiRoutes, { deps });
  await api.register(fulfillmentApiRoutes, { deps });
  await api.register(analyticsApiRoutes, { deps });
}

export async function orderAreaAdminRoutes(admin: FastifyInstance, { deps }: Opts) {
  await admin.register(orderAdminRoutes, { deps });
}

export async function orderAreaRootRoutes(app: FastifyInstance, { deps }: Opts) {
  await app.register(storefrontRoutes, { deps });
  await app.register(emailLogRoutes, { deps });
}
