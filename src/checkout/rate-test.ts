// Shipping rate request tests (issue 14): `POST /apps/developer/{appId}/shipping-rates/test` sends
// one sample rate request (C15.3) to the app's ratesUrl (or an address the developer gives) exactly
// as a checkout sends it: the same body builder (a sample origin, destination and two items), the
// same signing with the app's client secret, `X-SVC-Topic: shipping/rates`, the same HTTP client,
// address checks and 5 s timeout (app-rates.ts `sendRateRequest`). The reply is read by the
// checkout's own reader (rate-reply.ts `readRateReply`), which here also says why each rate it drops
// is dropped. Nothing is cached or recorded: the answer is the whole report.
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import type { PlatformUser } from '../accounts/jwt.js';
import { ownedApp } from '../apps/apps.service.js';
import { isoCurrency } from '../currencies.js';
import { unprocessable } from '../http/errors.js';
import { countPerMinute } from '../ratelimit/per-minute.js';
import { nullable } from '../http/schemas.js';
import { parseTargetUrl } from '../net/address-safety.js';
import type { StoreAddress } from '../stores/store-address.js';
import { cutTo } from '../text.js';
import { SAMPLE_SHOP_DOMAIN } from '../webhooks/samples.js';
import { offeredRate, RATE_REQUEST_TIMEOUT_MS, REPLY_MAX_BYTES, sendRateRequest } from './app-rates.js';
import { readRateReply } from './rate-reply.js';
import { rateRequestBody, rateRequestOf, type RateItem, type ShippingAddress } from './rate-request.js';
import { ShippingRateSchema } from './rate.js';

/** Rate tests an app may ask for per minute of the service clock; more -> 429. */
export const RATE_TESTS_PER_MINUTE = 60;
/** Dropped rates listed in an answer; `droppedCount` tells all of them. */
export const MAX_DROPS_LISTED = 100;
/** The start of the app's reply shown back, as the delivery log keeps a receiver's (C8.5). */
const RESPONSE_SHOWN_CHARS = 4096;

// Plainly fake, as the webhook samples are (samples.ts): Exampleville, 555-01xx numbers, product ids 0.
const SAMPLE_ORIGIN: StoreAddress = {
  address1: '1 Example Street', address2: null, city: 'Exampleville', province: 'California', country: 'US', zip: '00000', phone: '+1 555 0100',
};
const SAMPLE_DESTINATION: ShippingAddress = {
  first_name: 'Sample', last_name: 'Buyer', company: null, address1: '2 Example Avenue', address2: 'Apt 3', city: 'Exampleville',
  province: 'New York', province_code: 'NY', country: 'United States', country_code: 'US', zip: '00000', phone: '+1 555 0101',
};
/** Two T-shirts that ship, and a gift card that does not (a checkout's request holds every line). */
const SAMPLE_ITEMS: RateItem[] = [
  { name: 'Sample T-shirt - M', sku: 'SAMPLE-TSHIRT-M', quantity: 2, grams: 200, priceMinor: 2500, requiresShipping: true, productId: 0, variantId: 0 },
  { name: 'Sample gift card', sku: 'SAMPLE-GIFT-CARD', quantity: 1, grams: 0, priceMinor: 1000, requiresShipping: false, productId: 0, variantId: null },
];

export const RateTestBody = Type.Object({
  address: Type.Optional(Type.String({
    description: "where to send it instead of the manifest's extensions.shipping.ratesUrl: an absolute https URL (http while private addresses are allowed; "
      + 'else 422); private and unresolvable hosts are refused as it is sent (outcome error `blocked_address`), as for a checkout',
  })),
  currency: Type.Optional(Type.String({ description: 'the checkout currency asked for (ISO 4217, another -> 422); default USD' })),
});

const RateTestOutcomeSchema = Type.Object({
  responseStatus: nullable(Type.Integer({ description: "the app's HTTP status; null when no response arrived" })),
  durationMs: Type.Integer({ description: 'from sending to the response or the error' }),
  error: nullable(Type.String({
    description: '`timeout` (5 s), `blocked_address`, `network_error: <code>`, `non_2xx`, `malformed_reply` (see `malformed`); null when the reply was read',
  })),
});

const DroppedRateSchema = Type.Object({
  index: Type.Integer({ description: "the rate's index in the reply's `rates`" }),
  reason: Type.String({ description: 'why a checkout does not offer it, e.g. `rates[1]: currency "EUR" is not the checkout\'s USD`' }),
});

export const RateTestResultSchema = Type.Object({
  address: Type.String({ description: 'where the request was sent' }),
  currency: Type.String(),
  requestBody: Type.String({ description: 'the exact bytes sent and signed (X-SVC-Hmac-SHA256 with the app\'s client secret)' }),
  outcome: RateTestOutcomeSchema,
  responseBody: nullable(Type.String({ description: `the start of the reply (at most ${RESPONSE_SHOWN_CHARS} characters)` })),
  malformed: nullable(Type.String({ description: 'why the whole reply gives no rates (not JSON, no `rates` array, over the size limit); null otherwise' })),
  rates: Type.Array(ShippingRateSchema, { description: "the rates a checkout would offer, as its `shipping_rates` shows them" }),
  dropped: Type.Array(DroppedRateSchema, { description: `each rate of the reply a checkout drops, in order (the first ${MAX_DROPS_LISTED})` }),
  droppedCount: Type.Integer({ description: 'how many rates were dropped in all' }),
});

type RateTestResult = Static<typeof RateTestResultSchema>;

/** Counts this test against the app's minute (the shared attempt counters, as login throttling). */
const countTest = (deps: Deps, appId: string) =>
  countPerMinute(deps, {
    key: `rate-test:${appId}`,
    limit: RATE_TESTS_PER_MINUTE,
    refusal: `At most ${RATE_TESTS_PER_MINUTE} shipping rate tests a minute per app`,
    // Closed, unlike logins: without its count this route sends requests anywhere without bound.
    whenDown: { closed: 'The rate test counter is unavailable; try again shortly' },
    downLog: 'rate test counter unavailable',
  });

export async function testShippingRates(deps: Deps, developer: PlatformUser, appId: string, body: Static<typeof RateTestBody>): Promise<RateTestResult> {
  const app = await ownedApp(deps, developer, appId);
  const address = body.address ?? app.extensions.shipping?.ratesUrl;
  if (address === undefined) {
    throw unprocessable('The app declares no extensions.shipping.ratesUrl: give an address to send the rate request to', { address: ['is required when the app declares no ratesUrl'] });
  }
  if (body.address !== undefined) {
    const check = parseTargetUrl(body.address, deps.config.allowPrivateWebhooks);
    if (!check.ok) throw unprocessable(`address ${check.reason}`, { address: [check.reason] });
  }
  const currency = body.currency === undefined ? 'USD' : isoCurrency(body.currency);
  if (currency === null) throw unprocessable('currency must be an ISO 4217 currency code', { currency: ['must be an ISO 4217 currency code'] });
  await countTest(deps, app.id);

  const requestBody = rateRequestBody(rateRequestOf(SAMPLE_ORIGIN, SAMPLE_DESTINATION, SAMPLE_ITEMS, currency));
  const result = await sendRateRequest(deps, { ratesUrl: address, secretEnc: app.client_secret_enc, shopDomain: SAMPLE_SHOP_DOMAIN }, requestBody, RATE_REQUEST_TIMEOUT_MS);
  const report: RateTestResult = {
    address,
    currency,
    requestBody,
    outcome: { responseStatus: result.status, durationMs: result.durationMs, error: result.error },
    responseBody: result.responseBody === null ? null : cutTo(result.responseBody, RESPONSE_SHOWN_CHARS),
    malformed: null,
    rates: [],
    dropped: [],
    droppedCount: 0,
  };
  if (result.status === null) return report;
  if (result.status < 200 || result.status >= 300) return { ...report, outcome: { ...report.outcome, error: 'non_2xx' } };

  const read = readRateReply(result.responseBody ?? '', currency, (index, reason) => {
    if (report.dropped.length < MAX_DROPS_LISTED) report.dropped.push({ index, reason });
    report.droppedCount++;
  });
  if (typeof read === 'string') {
    // The checkout reads only the first REPLY_MAX_BYTES bytes: what is past them is never seen.
    const malformed = result.responseCut ? `the reply is over the ${REPLY_MAX_BYTES}-byte limit and was cut there: ${read}` : read;
    return { ...report, outcome: { ...report.outcome, error: 'malformed_reply' }, malformed };
  }
  return { ...report, rates: read.map((r) => offeredRate(app.handle, r)) };
}
