// Developer API: `POST /apps/developer/{appId}/webhooks/test` (issue 14; test-delivery.ts),
// registered in the developer surface (src/surfaces/developer.ts). The caller must own the app:
// another developer's app is 403, an unknown one 404 (ownedApp, C3.2).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { envelopeOf, Id } from '../http/schemas.js';
import { envelope } from '../http/shapes.js';
import { typed } from '../http/typed.js';
import { SAMPLE_SHOP_DOMAIN } from './samples.js';
import { sendTestDelivery, TEST_DELIVERIES_PER_MINUTE, TestDeliveryBody, TestDeliveryResultSchema } from './test-delivery.js';

export async function testDeliveryRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  app.post('/apps/developer/:appId/webhooks/test', {
    config: {
      errors: {
        422: 'A topic the platform does not deliver, or an address refused by the webhook address rules (C8.9)',
        429: `More than ${TEST_DELIVERIES_PER_MINUTE} test deliveries of this app in a minute (Retry-After)`,
      },
    },
    schema: {
      tags: ['webhooks'],
      summary: "Send a topic's signed sample payload to an address now, once, and answer its outcome (issue 14)",
      description: 'The sample has the shape of real deliveries of the topic, with plainly fake values; it is signed with the app\'s client secret, '
        + `carries the usual X-SVC-* headers (X-SVC-Shop-Domain \`${SAMPLE_SHOP_DOMAIN}\`, a reserved sample domain) and is recorded in the `
        + 'delivery log with source `test`. One attempt, no automatic retries: the answer is 200 whatever the address answered.',
      params: Type.Object({ appId: Id('the app id') }),
      body: TestDeliveryBody,
      response: { 200: envelopeOf(TestDeliveryResultSchema) },
    },
  }, async (request) => envelope(await sendTestDelivery(deps, request.user!, request.params.appId, request.body)));
}
