// buildApp(deps) builds the Fastify instance and never listens (design.md); main.ts listens.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Deps } from './deps.js';
import { asAppError, installErrorHandler, sendError } from './http/error-handler.js';
import { AppError } from './http/errors.js';
import { guardQueryAndParams, MAX_BODY_BYTES, useBoundedJson } from './http/input-guard.js';
import { routeIndex } from './http/route-shapes.js';
import { clientErrorHandler, expectationFailedHandler } from './http/client-errors.js';
import { EDGE_SERVER_OPTIONS, pathOfTarget, refuseAtTheEdge } from './http/edge.js';
import { createOpenapiTransform, shareErrorSchemas } from './http/openapi.js';
import { compileValidator } from './http/validation.js';
import { serializerCompiler } from './http/serialization.js';
import { unwrapResourceBodies } from './http/resource-body.js';
import { recordRoutes } from './surfaces/surface.js';
import { publicSurface } from './surfaces/public.js';
import { appApi, unroutedApiGate } from './surfaces/app-api.js';
import { appToken } from './surfaces/app-token.js';
import { merchantAdmin } from './surfaces/merchant-admin.js';
import { metafieldRead, storeStaff } from './surfaces/store-staff.js';
import { developerApi } from './surfaces/developer.js';
import { operatorApi } from './surfaces/operator.js';
import { API_VERSION } from './api-version.js';
import { healthRoutes } from './platform/health.routes.js';
import { instrumentHttp, metricsRoutes, UNMATCHED_ROUTE } from './platform/metrics.js';
import { echoRequestId, requestIdOf, REQUEST_ID_HEADER } from './http/request-id.js';
import { accountRoutes, staffRoutes } from './accounts/accounts.routes.js';
import { appRoutes } from './apps/apps.routes.js';
import { oauthMerchantRoutes, oauthTokenRoutes } from './oauth/oauth.routes.js';
import { operatorRoutes } from './platform/operator.routes.js';
import { uploadRoutes } from './catalog/uploads.js';
import { fileApiRoutes, filesUnavailable, isFilesUrl, productApiRoutes } from './catalog/products.api.js';
import { productAdminRoutes } from './catalog/products.admin.js';
import { productListingApiRoutes } from './catalog/product-listings.api.js';
import { collectionAdminRoutes, collectionApiRoutes } from './catalog/collections.routes.js';
import { variantAdminRoutes } from './catalog/variants.admin.js';
import { metafieldAdminRoutes, metafieldApiRoutes, metafieldReadRoutes } from './metafields/metafields.routes.js';
import { contentAdminRoutes } from './content/content.admin.js';
import { contentApiRoutes } from './content/content.api.js';
import { customerAdminRoutes } from './customers/customers.admin.js';
import { customerApiRoutes } from './customers/customers.api.js';
import { discountAdminRoutes } from './discounts/discounts.admin.js';
import { discountApiRoutes } from './discounts/discounts.api.js';
import { shippingApiRoutes } from './shipping/zones.api.js';
import { orderAdminRoutes } from './orders/orders.admin.js';
import { orderApiRoutes } from './orders/orders.api.js';
import { fulfillmentApiRoutes } from './fulfillments/fulfillments.api.js';
import { analyticsApiRoutes } from './analytics/analytics.api.js';
import { storefrontRoutes } from './storefront/storefront.routes.js';
import { checkoutRoutes } from './checkout/checkouts.routes.js';
import { webhookApiRoutes } from './webhooks/subscriptions.api.js';
import { storeWebhookRoutes } from './webhooks/store-webhooks.routes.js';
import { deliveryLogRoutes } from './webhooks/delivery-log.routes.js';
import { testDeliveryRoutes } from './webhooks/test-delivery.routes.js';
import { rateTestRoutes } from './checkout/rate-test.routes.js';
import { functionAdminRoutes } from './functions/functions.routes.js';
import { functionRunRoutes } from './functions/function-runs.routes.js';
import { emailLogRoutes } from './mail/emails.routes.js';
import { stripeWebhookRoutes } from './payments/stripe.routes.js';
import { developerBillingRoutes, operatorPayoutRoutes } from './billing/billing.routes.js';
import { reviewRoutes } from './reviews/reviews.js';
import { gdprAdminRoutes, gdprAppRoutes } from './gdpr/gdpr.routes.js';
import { notificationRoutes } from './notifications/notifications.routes.js';
import { storeAddressRoutes } from './stores/store-address.admin.js';
import { dashboard } from './dashboard/dashboard.js';

const FRAMEWORK_ERRORS: Record<string, string> = {
  FST_ERR_BAD_URL: 'Malformed URL',
  FST_ERR_MAX_PARAM_LENGTH: 'A path parameter is too long',
};

export interface BuildOptions {
  /** The /docs reference UI (off in tests: it only serves static assets). */
  docsUi?: boolean;
  /**
   * Compare every schema-serialised response with JSON.stringify of the same value and fail the
   * request on a difference (src/http/serialization.ts). On in the test harness; off in service.
   */
  checkResponses?: boolean;
}

export async function buildApp(deps: Deps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // Request logs carry method, path (query values redacted) and status only: never headers
    // (tokens, cookies) or bodies (secrets, personal data). See src/platform/logger.ts.
    loggerInstance: deps.log as FastifyBaseLogger,
    // Unique across processes; a well-formed incoming X-Request-Id is kept (src/http/request-id.ts).
    genReqId: requestIdOf,
    bodyLimit: MAX_BODY_BYTES,
    routerOptions: { ignoreTrailingSlash: true },
    // A request without Host and one that arrives during shutdown reach the hooks, to be refused
    // in the endpoint's shape rather than by Node or Fastify in theirs (src/http/edge.ts).
    ...EDGE_SERVER_OPTIONS,
    // Behind a load balancer the socket's address is the proxy's; SVC_TRUST_PROXY says which peers'
    // X-Forwarded-For to believe for `request.ip` (the login throttle's client address). Default:
    // none, so a client cannot pick its own address with the header.
    trustProxy: deps.config.trustProxy,
    // Errors raised before routing (a URL with bad percent-encoding, a path parameter over the
    // length limit) still get the shape of the endpoint the URL names (C5.1), under /api/v1 the
    // App API gate (401, rate limit and its headers, 429, scope; C5.5), a request id and a place in
    // the metrics: no hook runs for them.
    frameworkErrors: (error, request, reply) => {
      // Before routing, so before the onRequest hook that sets it on every other response.
      reply.header(REQUEST_ID_HEADER, request.id);
      // By its path: a target in absolute form (RFC 9112 3.2.2) is routed as its path is.
      const path = pathOfTarget(request.url);
      const answer = (refused?: Error) => {
        request.fallbackShape = routeOfUrl(request.method, request.url).shape;
        // Under /api/v1/files every authenticated request is C6.9's 404, a malformed URL included.
        const refusal = isFilesUrl(path) ? filesUnavailable() : new AppError('bad_request', FRAMEWORK_ERRORS[error.code] ?? 'Bad request');
        const err = refused ? asAppError(refused, request) : refusal;
        sendError(request, reply, err);
        deps.metrics.observeRequest(request.method, UNMATCHED_ROUTE, err.status, reply.elapsedTime / 1000);
      };
      if (path.startsWith('/api/v1/')) return unroutedGate(request, reply, answer);
      answer();
    },
    // Requests Node's parser refuses (headers over 16 KiB, broken framing, a request line that is
    // not HTTP) never become requests: answered in the shape of the endpoint their request line
    // names, with the version header under /api/v1 (src/http/client-errors.ts).
    clientErrorHandler: clientErrorHandler(
      (method, path) => routeOfUrl(method, path).shape,
      (method, status) => deps.metrics.observeRequest(method, UNMATCHED_ROUTE, status, 0),
    ),
  });
  const routeOfUrl = routeIndex(app);
  // Node's own 417 for an `Expect` other than 100-continue, in the endpoint's shape too.
  app.server.on('checkExpectation', expectationFailedHandler(
    (method, path) => routeOfUrl(method, path).shape,
    (method, status) => deps.metrics.observeRequest(method, UNMATCHED_ROUTE, status, 0),
  ));
  const unroutedGate = unroutedApiGate(deps, routeOfUrl);
  recordRoutes(app); // every route with its surface (src/surfaces/surface.ts; test/auth-matrix.test.ts)
  installErrorHandler(app);
  // Requests are validated and responses serialised by the route's schemas (src/http/validation.ts,
  // src/http/serialization.ts); a body may come wrapped under its resource's key (resource-body.ts).
  app.setValidatorCompiler(compileValidator);
  app.setSerializerCompiler(serializerCompiler({ checkResponses: options.checkResponses ?? false }));
  unwrapResourceBodies(app);
  echoRequestId(app);
  refuseAtTheEdge(app, (method, url) => routeOfUrl(method, url).shape);
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
    // operationIds and error responses for every route, in its declared shape (src/http/openapi.ts).
    transform: createOpenapiTransform(),
    transformObject: shareErrorSchemas as never,
  });

  // The map: every route is registered in exactly one surface, whose guard authenticates it and
  // whose onRoute hook documents that credential (src/surfaces/; docs/decisions.md, "Surfaces").
  // Public surfaces first, then one per credential.
  await app.register(
    publicSurface('platform', async (platform) => {
      await platform.register(healthRoutes, { deps });
      await platform.register(metricsRoutes, { metrics: deps.metrics });
      platform.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      if (options.docsUi !== false) {
        const { default: swaggerUi } = await import('@fastify/swagger-ui');
        await platform.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
      }
      await platform.register(uploadRoutes, { deps });
    }),
  );
  await app.register(publicSurface('accounts', (accounts) => accounts.register(accountRoutes, { deps })));
  await app.register(publicSurface('oauth-client', (oauth) => oauth.register(oauthTokenRoutes, { deps })));
  await app.register(
    publicSurface('storefront', async (storefront) => {
      await storefront.register(storefrontRoutes, { deps });
      await storefront.register(checkoutRoutes, { deps });
    }),
  );
  await app.register(publicSurface('payments', (payments) => payments.register(stripeWebhookRoutes, { deps })));

  // The store's own staff (merchant JWT; not the operator): installs, installations, session
  // tokens, staff; and the metafield read with C14.7's error words.
  await app.register(
    storeStaff(deps, async (staff) => {
      await staff.register(oauthMerchantRoutes, { deps });
      await staff.register(staffRoutes, { deps });
    }),
  );
  await app.register(metafieldRead(deps, (read) => read.register(metafieldReadRoutes, { deps })));

  // The merchant admin (C7; merchant JWT, or the operator naming a store).
  await app.register(
    merchantAdmin(deps, async (admin) => {
      await admin.register(productAdminRoutes, { deps });
      await admin.register(collectionAdminRoutes, { deps });
      await admin.register(variantAdminRoutes, { deps });
      await admin.register(metafieldAdminRoutes, { deps });
      await admin.register(contentAdminRoutes, { deps });
      await admin.register(customerAdminRoutes, { deps });
      await admin.register(discountAdminRoutes, { deps });
      await admin.register(storeWebhookRoutes, { deps });
      await admin.register(orderAdminRoutes, { deps });
      await admin.register(gdprAdminRoutes, { deps });
      await admin.register(notificationRoutes, { deps });
      await admin.register(reviewRoutes, { deps });
      await admin.register(storeAddressRoutes, { deps });
      await admin.register(functionAdminRoutes, { deps });
    }),
  );

  // The developer API (developer JWT: MERCHANT or PARTNER).
  await app.register(
    developerApi(deps, async (dev) => {
      await dev.register(appRoutes, { deps });
      await dev.register(developerBillingRoutes, { deps });
      await dev.register(deliveryLogRoutes, { deps });
      await dev.register(testDeliveryRoutes, { deps });
      await dev.register(rateTestRoutes, { deps });
      await dev.register(functionRunRoutes, { deps });
    }),
  );

  // The platform operator (SUPER_ADMIN JWT).
  await app.register(
    operatorApi(deps, async (ops) => {
      await ops.register(operatorRoutes, { deps });
      await ops.register(emailLogRoutes, { deps });
      await ops.register(operatorPayoutRoutes, { deps });
    }),
  );

  // An installed app with its access token: outside /api/v1 (GDPR acknowledge and complete), and
  // the App API itself (C5: token, rate limit, scope).
  await app.register(appToken(deps, (calls) => calls.register(gdprAppRoutes, { deps })));
  await app.register(
    appApi(deps, async (api) => {
      await api.register(productApiRoutes, { deps });
      await api.register(fileApiRoutes);
      await api.register(collectionApiRoutes, { deps });
      await api.register(productListingApiRoutes, { deps });
      await api.register(metafieldApiRoutes, { deps });
      await api.register(contentApiRoutes, { deps });
      await api.register(shippingApiRoutes, { deps });
      await api.register(customerApiRoutes, { deps });
      await api.register(discountApiRoutes, { deps });
      await api.register(webhookApiRoutes, { deps });
      await api.register(orderApiRoutes, { deps });
      await api.register(fulfillmentApiRoutes, { deps });
      await api.register(analyticsApiRoutes, { deps });
    }),
    { prefix: '/api/v1' },
  );

  // The dashboard (issue 15): HTML pages with a session cookie, in a surface of their own that
  // authenticates them and keeps them out of the OpenAPI document (src/dashboard/dashboard.ts).
  await app.register(dashboard(deps), { prefix: '/dashboard' });
  return app;
}
