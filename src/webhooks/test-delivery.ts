// Test deliveries (issue 14): `POST /apps/developer/{appId}/webhooks/test` sends the sample payload
// of a topic (samples.ts) to an address the developer gives, as the platform sends real ones: the
// same headers, signed with the app's client secret (as manifest and GDPR webhooks are, C8.7), the
// same queue row, sender and address checks (C8.9: when asked, and again as it is connected, by
// the delivery client's pinned lookup). It is recorded in the app's delivery log with source
// `test` and no store, and made once: one attempt, no automatic retries (a redeliver may send it
// again). The caller waits for that attempt and gets its outcome.
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import type { PlatformUser } from '../accounts/jwt.js';
import { ownedApp } from '../apps/apps.service.js';
import { throttled, unprocessable } from '../http/errors.js';
import { nullable, StringEnum } from '../http/schemas.js';
import { createDeliveries } from './deliveries.repo.js';
import { DELIVERY_STATUSES, DeliverySchema, getDelivery } from './delivery-log.js';
import { SAMPLE_SHOP_DOMAIN, samplePayload } from './samples.js';
import { sendAll } from './send-now.js';
import { checkAddress } from './subscriptions.service.js';
import { RATE_TOPIC } from '../checkout/app-rates.js';
import { isSubscribableTopic, TOPICS } from './topics.js';

/** Test deliveries an app may ask for per minute of the service clock; more -> 429. */
export const TEST_DELIVERIES_PER_MINUTE = 60;
/** How long to wait for the attempt when a worker took the delivery first (its lease is 20 s). */
const WAIT_FOR_WORKER_MS = 30_000;

export const TestDeliveryBody = Type.Object({
  topic: Type.String({ description: `the topic whose sample is sent: one of ${TOPICS.join(', ')} (another -> 422)` }),
  address: Type.String({
    description: 'where to send it: an absolute https URL (http while private addresses are allowed), checked as subscription addresses are (C8.9; refused -> 422)',
  }),
});

/** What the attempt gave: the delivery's status and its one attempt (null fields: not attempted). */
const TestOutcomeSchema = Type.Object({
  success: Type.Boolean({ description: 'the address answered 2xx' }),
  status: StringEnum(DELIVERY_STATUSES, { description: '`success` or `failed` once attempted (no retries); `pending` only if the attempt was still running when the wait ended' }),
  responseStatus: nullable(Type.Integer({ description: "the address's HTTP status; null when no response arrived" })),
  durationMs: nullable(Type.Integer({ description: 'from sending to the response or the error' })),
  error: nullable(Type.String({ description: '`timeout`, `blocked_address`, `network_error: <code>`, ... when no 2xx came' })),
});

export const TestDeliveryResultSchema = Type.Object({
  delivery: DeliverySchema,
  outcome: TestOutcomeSchema,
});

export async function sendTestDelivery(deps: Deps, developer: PlatformUser, appId: string, body: Static<typeof TestDeliveryBody>): Promise<Static<typeof TestDeliveryResultSchema>> {
  const app = await ownedApp(deps, developer, appId);
  // The rate request is signed like a webhook and carries a topic header, so a developer may well
  // ask for it here: say what it is and where it comes from rather than that it is no topic.
  if (body.topic === RATE_TOPIC) {
    throw unprocessable(
      `${RATE_TOPIC} is a shipping rate request (C15.3), not a webhook: a checkout of a store the app is installed on sends it to extensions.shipping.ratesUrl when the buyer asks for shipping rates`,
      { topic: ['is the shipping rate request, sent by checkouts, not as a test delivery'] },
    );
  }
  if (!isSubscribableTopic(body.topic)) throw unprocessable('topic is not a topic the platform delivers', { topic: ['is not a topic the platform delivers'] });
  const topic = body.topic;
  const address = await checkAddress(deps, body.address);
  const now = deps.clock.now();
  const sample = samplePayload(topic, now, deps.config.baseUrl);

  const [created] = await deps.db.transaction(async (tx) => {
    // One app's test deliveries are counted one request at a time, so the bound is exact.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`webhook-test:${app.id}`]);
    const { rows } = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE app_id = $1 AND source = 'test' AND created_at > $2`,
      [app.id, new Date(now.getTime() - 60_000)],
    );
    if (rows[0].n >= TEST_DELIVERIES_PER_MINUTE) throw throttled(`At most ${TEST_DELIVERIES_PER_MINUTE} test deliveries a minute per app`, 60);
    return createDeliveries(tx, [{
      source: 'test', appId: app.id, storeId: null, topic, address, body: sample.body, secret: deps.secrets.open(app.client_secret_enc),
      shopDomain: SAMPLE_SHOP_DOMAIN, extraHeaders: sample.headers, maxAttempts: 1,
    }], now);
  });
  await sendAll(deps, [created.deliveryId], WAIT_FOR_WORKER_MS);

  const { delivery } = await getDelivery(deps.db, app.id, created.deliveryId);
  const last = delivery.attempts.at(-1);
  return {
    delivery,
    outcome: {
      success: delivery.status === 'success',
      status: delivery.status,
      responseStatus: last?.responseStatus ?? null,
      durationMs: last?.durationMs ?? null,
      error: last?.error ?? null,
    },
  };
}
