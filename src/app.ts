// buildApp(deps) builds the Fastify instance and never listens (design.md); main.ts listens.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Deps } from './deps.js';
import { installErrorHandler, sendError } from './http/error-handler.js';
import { AppError } from './http/errors.js';
import { guardQueryAndParams, MAX_BODY_BYTES, useBoundedJson } from './http/input-guard.js';
import { routeShapeIndex } from './http/route-shapes.js';
import { healthRoutes } from './platform/health.routes.js';
import { instrumentHttp, UNMATCHED_ROUTE } from './platform/metrics.js';
import { echoRequestId, requestIdOf, REQUEST_ID_HEADER } from './http/request-id.js';
import { accountRoutes } from './accounts/accounts.routes.js';
import { appRoutes } from './apps/apps.routes.js';
import { oauthRoutes } from './oauth/oauth.routes.js';
import { operatorRoutes } from './platform/operator.routes.js';
import { appApi } from './surfaces/app-api.js';
import { merchantAdmin } from './surfaces/merchant-admin.js';
import { fileApiRoutes, productApiRoutes } from './catalog/products.api.js';
import { catalogAdminRoutes, catalogApiRoutes, catalogRootRoutes } from './catalog/plugins.js';
import { API_VERSION } from './api-version.js';
import { contentAdminRoutes } from './content/content.admin.js';
import { contentApiRoutes } from './content/content.api.js';
import { customerAdminRoutes } from './customers/customers.admin.js';
import { customerApiRoutes } from './customers/customers.api.js';
import { discountAdminRoutes } from './discounts/discounts.admin.js';
import { discountApiRoutes } from './discounts/discounts.api.js';
import { shippingApiRoutes } from './shipping/zones.api.js';
import { webhookApiRoutes } from './webhooks/subscriptions.api.js';
import { storeWebhookRoutes } from './webhooks/store-webhooks.routes.js';
import { deliveryLogRoutes } from './webhooks/delivery-log.routes.js';
import { stripeWebhookRoutes } from './payments/stripe.routes.js';
import { billingRoutes } from './billing/billing.routes.js';
import { orderAreaAdminRoutes, orderAreaApiRoutes, orderAreaRootRoutes } from './orders/plugins.js';
import { gdprAdminAreaRoutes, gdprRootRoutes } from './gdpr/plugins.js';

const FRAMEWORK_ERRORS: Record<string, string> = {
  FST_ERR_BAD_URL: 'Malformed URL',
  FST_ERR_MAX_PARAM_LENGTH: 'A path parameter is too long',
};

export interface BuildOptions {
  /** The /docs reference UI (off in tests: it only serves static assets). */
  docsUi?: boolean;
}

export async function buildApp(deps: Deps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // Request logs carry method, path (query values redacted) and status only: never headers
    // (tokens, cookies) or bodies (secrets, personal data). See src/platform/logger.ts.
    loggerInstance: deps.log as FastifyBaseLogger,
    // Unique across processes; a well-formed incoming X-Request-Id is kept (src/http/request-id.ts).
    genReqId: requestIdOf,
    bodyLimit: MAX_BODY_BYTES,
    // Unknown body keys are ignored (C5.6): they are kept out of validation, not rejected.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
    routerOptions: { ignoreTrailingSlash: true },
    // Errors raised before routing (a URL with bad percent-encoding, a path parameter over the
    // length limit) still get the shape of the endpoint the URL names (C5.1), the version header
    // under /api/v1 (C5.5), a request id and a place in the metrics: no hook runs for them.
    frameworkErrors: (error, request, reply) => {
      // Before routing, so before the onRequest hook that sets it on every other response.
      reply.header(REQUEST_ID_HEADER, request.id);
      if (request.url.startsWith('/api/v1/')) reply.header('X-SVC-Api-Version', API_VERSION);
      request.fallbackShape = shapeOfUrl(request.method, request.url);
      deps.metrics.observeRequest(request.method, UNMATCHED_ROUTE, 400, reply.elapsedTime / 1000);
      return sendError(request, reply, new AppError('bad_request', FRAMEWORK_ERRORS[error.code] ?? 'Bad request'));
    },
  });
  const shapeOfUrl = routeShapeIndex(app);
  installErrorHandler(app);
  echoRequestId(app);
  instrumentHttp(app, deps.metrics);
  // Client input is checked once, here, for every route registered below (src/http/input-guard.ts):
  // JSON bodies as they are parsed, the query string and path parameters before validation.
  useBoundedJson(app);
  app.addHook('preValidation', guardQueryAndParams);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Store platform App API',
        version: API_VERSION,
        description: 'App API (/api/v1, OAuth access token), OAuth install, developer, merchant admin and operator routes. See README.md.',
      },
      // Relative: the reference UI's "Try it out" calls the host the page was opened on. An absolute
      // SVC_BASE_URL made it cross-origin (and failing) whenever /docs was reached by another name.
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          accessToken: { type: 'http', scheme: 'bearer', description: 'OAuth access token of an installed app' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Platform JWT from /auth/login' },
        },
      },
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  if (options.docsUi !== false) {
    const { default: swaggerUi } = await import('@fastify/swagger-ui');
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  }

  await app.register(healthRoutes, { deps });
  await app.register(accountRoutes, { deps });
  await app.register(appRoutes, { deps });
  await app.register(oauthRoutes, { deps });
  await app.register(operatorRoutes, { deps });
  await app.register(catalogRootRoutes, { deps });
  await app.register(deliveryLogRoutes, { deps });
  await app.register(stripeWebhookRoutes, { deps });
  await app.register(billingRoutes, { deps });
  await app.register(orderAreaRootRoutes, { deps });
  await app.register(gdprRootRoutes, { deps });
  await app.register(
    merchantAdmin(deps, async (_admin) => {
      // Merchant admin routes of each area are registered here (C7).
      await _admin.register(catalogAdminRoutes, { deps });
      await _admin.register(contentAdminRoutes, { deps });
      await _admin.register(customerAdminRoutes, { deps });
      await _admin.register(discountAdminRoutes, { deps });
      await _admin.register(storeWebhookRoutes, { deps });
      await _admin.register(orderAreaAdminRoutes, { deps });
      await _admin.register(gdprAdminAreaRoutes, { deps });
    }),
  );
  await app.register(
    appApi(deps, async (api) => {
      await api.register(productApiRoutes, { deps });
      await api.register(fileApiRoutes);
      await api.register(catalogApiRoutes, { deps });
      await api.register(contentApiRoutes, { deps });
      await api.register(shippingApiRoutes, { deps });
      await api.register(customerApiRoutes, { deps });
      await api.register(discountApiRoutes, { deps });
      await api.register(webhookApiRoutes, { deps });
      await api.register(orderAreaApiRoutes, { deps });
    }),
    { prefix: '/api/v1' },
  );
  return app;
}
