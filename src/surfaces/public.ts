// Public surfaces: routes that take no credential in `Authorization`. Each is named for why it is
// public, and the auth matrix test (test/auth-matrix.test.ts) lists every one of their routes, so
// a route cannot become public by being registered in the wrong place unnoticed:
//   platform      health, readiness, metrics, the API reference, uploaded images
//   accounts      sign-up and login (C2.1, C2.2)
//   oauth-client  the token endpoint: the app authenticates with client id and secret in the body (C4.4)
//   storefront    storefront events (C7.4) and an order's status for its customer (its key in the query)
//   payments      the payment processor's events, verified by their Stripe-Signature (C13.1)
import type { FastifyInstance } from 'fastify';
import { claimRoutes, type SurfaceName, type SurfaceRoutes } from './surface.js';

export type PublicSurfaceName = Extract<SurfaceName, 'platform' | 'accounts' | 'oauth-client' | 'storefront' | 'payments'>;

/** What a caller presents instead, for the reference. */
const CREDENTIAL: Record<PublicSurfaceName, string> = {
  platform: 'none',
  accounts: 'none',
  'oauth-client': "none in Authorization; the app's client_id and client_secret in the body",
  storefront: 'none',
  payments: 'none; the Stripe-Signature header',
};

export function publicSurface(name: PublicSurfaceName, routes: SurfaceRoutes) {
  return async function publicSurfacePlugin(instance: FastifyInstance) {
    claimRoutes(instance, { name, security: null, credential: CREDENTIAL[name] });
    await routes(instance);
  };
}
