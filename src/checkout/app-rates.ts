// Shipping apps' live rates (C15.3). For a checkout that requires shipping and has an address,
// every app actively installed on the store with `write_shipping` granted and a manifest
// `extensions.shipping.ratesUrl` is asked, all in parallel, with one signed request body; each
// answer (or failure) is cached per app and body. An app that is slow, down, blocked or wrong
// yields no rates and costs the buyer at most the timeout: nothing here throws for an app's sake.
// At most two queries per quote whatever the number of apps: the apps with the store's address
// (none when the checkout's quote query read them, checkouts.repo.ts `findCheckoutForQuote`), then
// the cached answers this process does not remember (rate-memo.ts), so none when it remembers them all,
// and none either when the quote query read them with the checkout, for the body the checkout's
// last change foresaw (checkouts.rate_body_sha256) and the quote sends.
// The apps are asked, and their replies read, on a thread of its own (rate-requests.ts).
// Fresh answers are written to the shared table after the quote, in batches (rate-cache-writer.ts).
// A checkout quoted again unchanged reuses its last quote in this process (rate-memo.ts `lastQuote`).
import { sha256Hex } from '../crypto.js';
import type { Deps } from '../deps.js';
import { parseTargetUrl } from '../net/address-safety.js';
import type { SendResult } from '../webhooks/http-client.js';
import { formatMinor } from '../money.js';
import { signedHeaders } from '../webhooks/signature.js';
import { ADDRESS_FIELDS, type StoreAddress } from '../stores/store-address.js';
import { answerExpiresMs, cachedAnswers, liveAnswers, type AnswersReadWithCheckout, type FreshAnswer } from './rate-cache.js';
import type { AppRate } from './rate-reply.js';
import { asksApps, rateRequestBody, rateRequestInputs, rateRequestOf, sameInputs, type RateItem, type ShippingAddress } from './rate-request.js';
import type { ShippingRate } from './rate.js';
import type { CheckoutAppQuote, MemoAnswer } from './rate-memo.js';
import { isSuccessStatus, RATE_CONNECTIONS_PER_ORIGIN, RATE_REQUEST_TIMEOUT_MS, RATE_TOPIC, REPLY_MAX_BYTES, type RateRequestOutcome } from './rate-requests.js';

export { RATE_CONNECTIONS_PER_ORIGIN, RATE_REQUEST_TIMEOUT_MS, RATE_TOPIC, REPLY_MAX_BYTES };

export interface RateQuote {
  storeId: string;
  /**
   * The checkout quoted (its token hash, which a quote knows before reading the row), if any: its
   * last quote in this process is reused while nothing it was made of changed.
   */
  checkoutKey?: string;
  /** The store's currency (ISO 4217): the request's, and the only one whose rates are kept. */
  currency: string;
  /** The buyer's shipping address; without `country_code` there are no rates. */
  destination: ShippingAddress;
  items: RateItem[];
  /** The apps to ask and the store's address when already read (`findCheckoutForQuote`); else read here. */
  shipping?: ShippingApps;
  /** The shared cache's answers read with the checkout (`findCheckoutForQuote`), if any. */
  cached?: AnswersReadWithCheckout | null;
}

export interface QuoteOptions {
  /** At most the client's RATE_REQUEST_TIMEOUT_MS; shorter in tests. */
  timeoutMs?: number;
}

export interface ShippingApp {
  id: string;
  handle: string;
  ratesUrl: string;
  secretEnc: string;
  shopDomain: string;
}

export interface ShippingApps {
  apps: ShippingApp[];
  origin: StoreAddress;
}

/**
 * The apps to ask (actively installed on the store, `write_shipping` granted, a ratesUrl declared),
 * and the store's address (C15.4; every field null when none was saved), in one query. In handle
 * order by bytes (`COLLATE "C"`), whatever the database's collation: the order decides the order of
 * the rates and which of two rates with one handle is offered (`offeredOnce`), and a linguistic
 * collation (en_US, where `-` is ignored at first) would order `a-c` after `ab` (text-order.ts).
 */
export async function shippingAppsOf(deps: Pick<Deps, 'db'>, storeId: string): Promise<ShippingApps> {
  const { rows } = await deps.db.query<ShippingApp & StoreAddress>(
    `SELECT a.id, a.handle, a.extensions->'shipping'->>'ratesUrl' AS "ratesUrl", a.client_secret_enc AS "secretEnc", s.slug AS "shopDomain",
            sa.address1, sa.address2, sa.city, sa.province, sa.country, sa.zip, sa.phone
       FROM installations i JOIN apps a ON a.id = i.app_id JOIN stores s ON s.id = i.store_id
       LEFT JOIN store_addresses sa ON sa.store_id = i.store_id
      WHERE i.store_id = $1 AND i.status = 'active' AND i.scopes @> '["write_shipping"]'::jsonb
        AND jsonb_typeof(a.extensions->'shipping'->'ratesUrl') = 'string'
      ORDER BY a.handle COLLATE "C"`,
    [storeId],
    { name: 'checkout_shipping_apps' },
  );
  const origin = Object.fromEntries(ADDRESS_FIELDS.map((k) => [k, rows[0]?.[k] ?? null])) as StoreAddress;
  return { apps: rows.map(({ id, handle, ratesUrl, secretEnc, shopDomain }) => ({ id, handle, ratesUrl, secretEnc, shopDomain })), origin };
}

/** An app's validated rate as the checkout offers it (C15.3). */
export function offeredRate(appHandle: string, r: AppRate): ShippingRate {
  return {
    handle: `app-${appHandle}-${r.service_code}`,
    title: r.service_name,
    price: formatMinor(r.price_minor)!,
    code: `${appHandle}-${r.service_code}`,
    source: appHandle,
    description: r.description,
    min_delivery_date: r.min_delivery_date,
    max_delivery_date: r.max_delivery_date,
  };
}

/** A rate left out of the offer: its app, its handle, and the app whose rate holds that handle. */
export interface DroppedRate {
  app: string;
  handle: string;
  keptFrom: string;
}

/**
 * The apps' rates as the checkout offers them: apps in order, each app's rates in its order, and
 * each handle once. `app-{app_handle}-{service_code}` (C15.3) is not one-to-one: app handles may
 * hold `-`, so app `a-b`'s code `c` and app `a`'s code `b-c` both make `app-a-b-c`. The buyer
 * chooses by handle (C15.1), so a second rate under a handle already offered could never be had
 * at its own price or from its own app: the first offered keeps the handle, later ones are
 * dropped (`onDrop` hears of each). The rest of the checkout's list cannot meet these: zone rates
 * are `zone-{id}` (one per zone), and the delivery functions only hide, rename (the title) and
 * move rates. docs/decisions.md, "Shipping rates": one handle, one rate.
 */
export function offeredOnce(apps: readonly Pick<ShippingApp, 'handle'>[], answers: readonly Pick<MemoAnswer, 'rates'>[], onDrop?: (drop: DroppedRate) => void): ShippingRate[] {
  const offered: ShippingRate[] = [];
  /** Each handle offered so far, and the app whose rate it is. */
  const holders = new Map<string, string>();
  apps.forEach((app, i) => {
    for (const r of answers[i].rates) {
      const rate = offeredRate(app.handle, r);
      const holder = holders.get(rate.handle);
      if (holder !== undefined) {
        onDrop?.({ app: app.handle, handle: rate.handle, keptFrom: holder });
        continue;
      }
      holders.set(rate.handle, app.handle);
      offered.push(Object.freeze(rate));
    }
  });
  return offered;
}

/**
 * Whether an app's ratesUrl may be asked now, by the address rules of webhooks (C8.9) on the URL
 * itself (its scheme and form): checked before its secret is opened or anything is sent, by both
 * ways a rate request goes out (`sendRateRequest`, `requestRates`); the thread (rate-requests.ts)
 * does not check it again. The address it names is the outbound client's to check, as it connects.
 */
function ratesUrlAllowed(deps: Deps, app: Pick<ShippingApp, 'ratesUrl'>): boolean {
  return parseTargetUrl(app.ratesUrl, deps.config.allowPrivateWebhooks).ok;
}

/**
 * One signed rate request to an app's ratesUrl, sent from this thread with the reply's raw text, for
 * the developer's rate test (rate-test.ts), which explains the reply; a checkout's quote sends the
 * same request on the rate requests' thread (`requestRates`). Never throws for the app's sake. The
 * address rules of webhooks hold at request time too (C8.9): the scheme here (`ratesUrlAllowed`), and in the client an IP literal before connecting and a
 * name as it is resolved (so a name that pointed elsewhere when it was saved is refused now),
 * exactly as for webhook deliveries. `responseCut`: the reply was longer than REPLY_MAX_BYTES.
 */
export async function sendRateRequest(deps: Deps, app: Pick<ShippingApp, 'ratesUrl' | 'secretEnc' | 'shopDomain'>, body: string, timeoutMs: number): Promise<SendResult> {
  if (!ratesUrlAllowed(deps, app)) return { status: null, responseBody: null, error: 'blocked_address', durationMs: 0 };
  return deps.rateHttp.send(app.ratesUrl, signedHeaders(deps.secrets.open(app.secretEnc), body, RATE_TOPIC, app.shopDomain), body, { timeoutMs, keepBytes: REPLY_MAX_BYTES });
}

/**
 * One signed rate request of a checkout's quote, sent on the rate requests' thread (rate-requests.ts)
 * with the same signature, client and limits as `sendRateRequest`; the reply comes back validated.
 * The address rules hold as there: the scheme here, the address in the thread's client.
 */
function requestRates(deps: Deps, app: ShippingApp, body: string, currency: string, timeoutMs: number): Promise<RateRequestOutcome> {
  if (!ratesUrlAllowed(deps, app)) return Promise.resolve({ status: null, error: 'blocked_address', durationMs: 0, rates: null });
  return deps.rateRequests.ask({ url: app.ratesUrl, secret: deps.secrets.open(app.secretEnc), shopDomain: app.shopDomain, body, timeoutMs, currency });
}

/**
 * Ask one app, and remember its answer in this process at once: a 2xx 15 minutes (its rates; none
 * when the body was malformed), anything else (non-2xx, timeout, refused address, network error)
 * 30 seconds. The caller hands the quote's answers to the shared table's writer together.
 */
async function askApp(deps: Deps, app: ShippingApp, body: string, currency: string, timeoutMs: number): Promise<FreshAnswer> {
  const result = await requestRates(deps, app, body, currency, timeoutMs);
  const ok = isSuccessStatus(result.status);
  const rates = result.rates;
  if (!ok || rates === null) {
    deps.log.warn({ app: app.handle, status: result.status, error: result.error ?? (ok ? 'malformed_reply' : 'non_2xx') }, 'shipping rate request gave no rates');
  }
  // Remembered here first, so this process answers the next quote from memory even before the row is written.
  const answer: FreshAnswer = { appId: app.id, ratesUrl: app.ratesUrl, ok, rates: rates ?? [], expiresMs: answerExpiresMs(deps.clock.nowMs(), ok) };
  deps.rateMemo.set(app.id, body, { ratesUrl: answer.ratesUrl, rates: answer.rates, expiresMs: answer.expiresMs });
  return answer;
}

/** The answers this process remembers to this body from each app's current ratesUrl, and the apps it does not. */
function rememberedAnswers(deps: Deps, apps: ShippingApp[], body: string): { found: Map<string, MemoAnswer>; unknown: ShippingApp[] } {
  const nowMs = deps.clock.nowMs();
  const found = new Map<string, MemoAnswer>();
  const unknown: ShippingApp[] = [];
  for (const app of apps) {
    const hit = deps.rateMemo.get(app.id, body, nowMs);
    if (hit && hit.ratesUrl === app.ratesUrl) found.set(app.id, hit);
    else unknown.push(app);
  }
  return { found, unknown };
}

/**
 * The live cached answers to this body of the apps this process does not remember (`found` holds
 * those it does, and gets these added), from the shared table: as read with the checkout when that
 * was of this body, else by a query. Returns the body's hash, the table's key.
 */
async function storedAnswersOf(deps: Deps, unknown: ShippingApp[], body: string, found: Map<string, MemoAnswer>, readWithCheckout?: AnswersReadWithCheckout | null): Promise<string> {
  const bodySha256 = sha256Hex(body);
  // Read with the checkout when its last change foresaw this very body; else read now.
  const stored = readWithCheckout?.bodySha256 === bodySha256
    ? liveAnswers(readWithCheckout.rows, deps.clock.nowMs())
    : await cachedAnswers(deps, unknown.map((a) => a.id), bodySha256);
  for (const app of unknown) {
    const hit = stored.get(app.id);
    if (!hit || hit.ratesUrl !== app.ratesUrl) continue;
    deps.rateMemo.set(app.id, body, hit);
    found.set(app.id, hit);
  }
  return bodySha256;
}

/**
 * Every shipping app's rates for this quote, apps in handle order and each app's rates in its
 * order, no two with one handle (`offeredOnce`). None when no item requires shipping or there is
 * no destination country. Never throws for an app's failure; a database failure reading the apps
 * or the cache does (the checkout could not go on either way). The rates returned may be shared with other quotes: never change them.
 */
export async function quoteAppRates(deps: Deps, quote: RateQuote, options: QuoteOptions = {}): Promise<readonly ShippingRate[]> {
  if (!asksApps(quote.destination, quote.items)) return [];
  const { apps, origin } = quote.shipping ?? (await shippingAppsOf(deps, quote.storeId));
  if (!apps.length) return [];
  const request = rateRequestOf(origin, quote.destination, quote.items, quote.currency);
  const last = quote.checkoutKey ? deps.rateMemo.lastQuote(quote.checkoutKey) : undefined;
  const inputs = rateRequestInputs(request);
  const sameRequest = last !== undefined && sameInputs(last.inputs, inputs);
  // The buyer asking again with nothing changed and no answer expired: the same rates, at once.
  if (sameRequest && deps.clock.nowMs() < last.expiresMs && sameAppsAsked(last.apps, apps)) return last.offered;
  const body = sameRequest ? last.body : rateRequestBody(request);
  const { answers, fromMemory } = await answersTo(deps, apps, body, request.currency, quote.cached, options);
  // Told once per body in this process: an offer built wholly from memory was built, and told, before.
  const dropped = fromMemory ? undefined : (drop: DroppedRate) => deps.log.warn(drop, 'shipping rate dropped: another rate offered has the same handle');
  const offered = Object.freeze(offeredOnce(apps, answers, dropped));
  // Kept for the checkout once this process has answered its body before: a checkout quoted once
  // (most are, under load) costs no memory beyond its answers.
  if (quote.checkoutKey && fromMemory) {
    const expiresMs = Math.min(...answers.map((a) => a.expiresMs));
    const remembered: CheckoutAppQuote = { inputs, apps: apps.map(({ id, handle, ratesUrl }) => ({ id, handle, ratesUrl })), body, offered, expiresMs };
    deps.rateMemo.rememberQuote(quote.checkoutKey, remembered);
  }
  return offered;
}

/**
 * The same apps, in the same order, as a checkout's last quote asked: by id, handle (its rates'
 * handles) and ratesUrl (the answers' key). Compared field by field, with nothing built: this is
 * on the path of every quote answered from memory.
 */
function sameAppsAsked(asked: CheckoutAppQuote['apps'], apps: readonly ShippingApp[]): boolean {
  if (asked.length !== apps.length) return false;
  for (let i = 0; i < apps.length; i++) {
    const a = asked[i];
    const b = apps[i];
    if (a.id !== b.id || a.handle !== b.handle || a.ratesUrl !== b.ratesUrl) return false;
  }
  return true;
}

/** What each app (in order) gave for this body: its rates and until when they stand (service clock). */
type AppAnswer = Pick<MemoAnswer, 'rates' | 'expiresMs'>;

/**
 * Each app's answer to this body: from this process's memory, else the shared table, else the app
 * itself (all the apps left, in parallel). An app whose request failed unexpectedly gives no rates,
 * standing for no time at all (nothing is remembered of it). `fromMemory`: every answer was in
 * this process's memory.
 */
async function answersTo(
  deps: Deps, apps: ShippingApp[], body: string, currency: string, readWithCheckout: AnswersReadWithCheckout | null | undefined, options: QuoteOptions,
): Promise<{ answers: AppAnswer[]; fromMemory: boolean }> {
  const { found: cached, unknown } = rememberedAnswers(deps, apps, body);
  // All remembered (a buyer quoting again): no query, no hash of the body, and nothing to wait for.
  if (!unknown.length) return { answers: apps.map((app) => cached.get(app.id)!), fromMemory: true };
  const bodySha256 = await storedAnswersOf(deps, unknown, body, cached, readWithCheckout);
  const timeoutMs = options.timeoutMs ?? RATE_REQUEST_TIMEOUT_MS;
  const fresh: FreshAnswer[] = [];
  const answers = await Promise.all(
    apps.map((app): AppAnswer | Promise<AppAnswer> => {
      const hit = cached.get(app.id);
      if (hit) return hit;
      return askApp(deps, app, body, currency, timeoutMs).then(
        (answer) => {
          fresh.push(answer);
          return answer;
        },
        (err) => {
          // Unexpected (a secret that does not open): this app is skipped, never the checkout.
          deps.log.error({ err, app: app.handle }, 'shipping rate request failed');
          return { rates: [], expiresMs: 0 };
        },
      );
    }),
  );
  // The table gets the answers behind the quote (rate-cache-writer.ts): this process already remembers them.
  if (fresh.length) deps.rateCacheWriter.add(bodySha256, fresh);
  return { answers, fromMemory: false };
}
