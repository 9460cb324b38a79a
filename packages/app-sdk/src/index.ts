// @svc/app-sdk: what an app built on the store platform needs (issue 14).
export { signBody, verifyBodySignature, SIGNATURE_HEADER } from './signatures.js';
export { verifyMessage, headerValue, isGdprTopic, type VerifiedMessage, type Refusal, type HeaderBag } from './webhooks.js';
export { verifyRateRequest, rateReply, currencyDigits, toMinorUnits, fromMinorUnits, type RateRequest, type RateRequestRefusal, type RateOffer, type RateItem, type RateAddress } from './rates.js';
export { verifySessionToken, type SessionToken } from './session-token.js';
export {
  verifyHandoff, exchangeCode, refreshTokens, TokenKeeper, MemoryTokenStore, FileTokenStore, PlatformError, CodeAlreadyExchangedError, HANDOFF_MAX_AGE_SECONDS, TOKEN_REQUEST_TIMEOUT_MS,
  type Handoff, type Tokens, type TokenStore, type AppCredentials,
} from './install.js';
export * from './functions.js';
export {
  createAppClient, nextLink, ApiError,
  type AppClient, type AppClientOptions, type RetryOptions, type RateLimitState, type Page, type ItemOf, type OkBody, type paths,
} from './client.js';
export {
  parseWebhook, isTopic, SUBSCRIPTION_TOPICS, GDPR_TOPICS, OTHER_TOPICS,
  type WebhookMessage, type WebhookRefusal, type DeliveryFields, type TopicPayloads, type KnownTopic, type OtherTopic, type SubscriptionTopic, type GdprTopic,
  type RestOrder, type OrderCreatePayload, type SubscriptionPayload, type CustomersDataRequestPayload, type CustomersRedactPayload, type ShopRedactPayload,
} from './payloads.js';
export {
  readWebRequest, readNodeRequest, receiveWebRequest, receiveNodeRequest, rateResponse, sendRates, refusalResponse, sendRefusal, refusalStatus,
  BodyTooLargeError, IncompleteBodyError, BodyAlreadyReadError, DEFAULT_MAX_BODY_BYTES, type RawRequest, type ReceiveRefusal,
} from './adapters.js';
export { acknowledgeGdprRequest, completeGdprRequest, type GdprRequest } from './gdpr.js';
export {
  expectFunction, checkFunction, runFixtures, assertFixtures, jsonDifferences, FixtureMismatchError, type FunctionFixture, type FixtureOutcome,
} from './fixtures.js';
