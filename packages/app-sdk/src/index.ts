// @svc/app-sdk: what an app built on the store platform needs (issue 14; in progress).
export { signBody, verifyBodySignature, SIGNATURE_HEADER } from './signatures.js';
export { verifyMessage, type VerifiedMessage, type Refusal } from './webhooks.js';
export { verifyRateRequest, rateReply, type RateRequest, type RateOffer, type RateItem, type RateAddress } from './rates.js';
export { verifySessionToken, type SessionToken } from './session-token.js';
export {
  verifyHandoff, exchangeCode, refreshTokens, TokenKeeper, MemoryTokenStore, FileTokenStore, PlatformError, HANDOFF_MAX_AGE_SECONDS,
  type Handoff, type Tokens, type TokenStore, type AppCredentials,
} from './install.js';
export * from './functions.js';
