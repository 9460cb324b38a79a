// Developer API: `POST /apps/developer/{appId}/shipping-rates/test` (issue 14; rate-test.ts),
// registered in the developer surface (src/surfaces/developer.ts). The caller must own the app:
// another developer's app is 403, an unknown one 404 (ownedApp, C3.2).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { envelopeOf, Id } from '../http/schemas.js';
import { envelope } from '../http/shapes.js';
import { typed } from '../http/typed.js';
import { SAMPLE_SHOP_DOMAIN } from '../webhooks/samples.js';
import { RATE_TESTS_PER_MINUTE, RateTestBody, RateTestResultSchema, testShippingRates } from './rate-test.js';

export async function rateTestRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  app.post('/apps/developer/:appId/shipping-rates/test', {
    config: {
      errors: {
        422: 'No address given and no extensions.shipping.ratesUrl declared, an address that is not an http(s) URL, or a currency that is not ISO 4217',
        429: `More than ${RATE_TESTS_PER_MINUTE} rate tests of this app in a minute (Retry-After)`,
        503: 'The counter of rate tests is unavailable (Retry-After)',
      },
    },
    schema: {
      tags: ['apps'],
      summary: 'Send a sample shipping rate request (C15.3) now, as a checkout would, and answer what a checkout would offer of the reply (issue 14)',
      description: 'The request has a sample origin, destination and two items, is signed with the app\'s client secret and carries '
        + `\`X-SVC-Topic: shipping/rates\` and X-SVC-Shop-Domain \`${SAMPLE_SHOP_DOMAIN}\` (a reserved sample domain). The reply is read by the `
        + "checkout's own reader: the answer lists the rates a checkout would offer, each rate it would drop with the reason, and why a whole "
        + 'reply gives no rates. Nothing is cached or recorded; the answer is 200 whatever the app answered.',
      params: Type.Object({ appId: Id('the app id') }),
      body: RateTestBody,
      response: { 200: envelopeOf(RateTestResultSchema) },
    },
  }, async (request) => envelope(await testShippingRates(deps, request.user!, request.params.appId, request.body)));
}
