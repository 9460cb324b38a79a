// Validation of the app manifest fields of C3.1, shared by create and update.
import type { Config } from '../config.js';
import { badRequest } from '../http/errors.js';
import { checkTargetUrl } from '../net/address-safety.js';
import { describeRefused, isScope } from '../oauth/scopes.js';
import { isSubscribableTopic } from '../webhooks/topics.js';
import { MAX_SLUG_CHARS, slugify } from '../slug.js';
import { longerThan } from '../text.js';
import { TIER_LIMITS } from '../ratelimit/limiter.js';
import { fitsMinorUnits, isoCurrency, minorDigits } from '../currencies.js';
import { AmountTooLargeError, formatMinor, parseMoney } from '../money.js';
import type { DeclaredFunction } from '../functions/functions.repo.js';
import { MAX_MANIFEST_FUNCTIONS, readManifestFunctions } from '../functions/manifest-functions.js';

/** The manifest's extensions (C3.1) as stored and shown. */
export interface Extensions {
  webhooks?: { topic: string; uri: string }[];
  salesChannel?: boolean;
  shipping?: { ratesUrl: string };
  functions?: DeclaredFunction[];
}
/**
 * `extensions` as a request gives it: a key left out is not named, a key given as null is named
 * and removed (PATCH merges by key, docs/decisions.md; create stores the keys given a value).
 */
export type ExtensionsPatch = { [K in keyof Extensions]?: Extensions[K] | null };

export interface AppFields {
  name?: string;
  handle?: string;
  appUrl?: string;
  redirectUrls?: string[];
  scopes?: string[];
  tier?: string;
  gdprUrls?: { customerDataRequest?: string; customerRedact?: string; shopRedact?: string } | null;
  extensions?: ExtensionsPatch;
  pricing?: { type: 'free' } | { type: 'recurring'; amount: string; currency: string; interval: 'month' | 'year'; trialDays?: number };
  version?: string;
}

/**
 * Longest app name, in characters as sent (JSON Schema's count: code points): the platform's limit
 * for display text (product and collection titles). The name is shown wherever the app is (the
 * dashboard, installations, GDPR acknowledgments); 100,000 characters were taken before.
 */
export const MAX_APP_NAME_CHARS = 255;
/**
 * Longest version: SemVer sets none; 128 characters hold any real one (pre-release and build
 * metadata such as `+sha.<40 hex digits>` included). It is copied to every installation (C3.3).
 */
export const MAX_APP_VERSION_CHARS = 128;
/** Longest handle: a handle is a slug, and a slug has at most this many characters (also a default one, with its `-N`). */
export const MAX_APP_HANDLE_CHARS = MAX_SLUG_CHARS;
/** Most OAuth redirect addresses of one app: more is no real app's need, and each is shown and checked at every authorize. */
export const MAX_REDIRECT_URLS = 50;
/**
 * Most manifest webhooks of one app: each is one delivery per event per installation (C8.2), so the
 * count multiplies the fan-out; 100 holds every topic (24) to a few addresses.
 */
export const MAX_MANIFEST_WEBHOOKS = 100;
export { MAX_MANIFEST_FUNCTIONS };

/** Largest recurring price, in hundredths (10 trillion major units). */
const MAX_PRICE_MINOR = 1e15;
/**
 * C3.1 "semantic version": SemVer 2.0.0's own grammar (semver.org, its suggested expression): no
 * leading zeros in the three numbers or in a numeric pre-release part, no empty dot-separated part.
 * "01.0.0" and "1.0.0-a..b" are not versions; a looser pattern took them.
 */
const NUM = '(?:0|[1-9]\\d*)';
const PRE_PART = '(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)';
const SEMVER = new RegExp(`^${NUM}\\.${NUM}\\.${NUM}(?:-${PRE_PART}(?:\\.${PRE_PART})*)?(?:\\+[0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*)?$`);
const GDPR_KEYS = ['customerDataRequest', 'customerRedact', 'shopRedact'] as const;

async function url(field: string, value: unknown, config: Config): Promise<string> {
  const check = await checkTargetUrl(value, config.allowPrivateWebhooks);
  if (!check.ok) throw badRequest(`${field} ${check.reason}`);
  return check.url.toString();
}

/** Checks the fields present in `body`; `creating` makes the required ones required. */
export async function readAppFields(body: Record<string, any>, config: Config, creating: boolean): Promise<AppFields> {
  const out: AppFields = {};
  if (creating || body.name !== undefined) {
    if (typeof body.name !== 'string' || !body.name.trim()) throw badRequest('name is required');
    if (longerThan(body.name, MAX_APP_NAME_CHARS)) throw badRequest(`name must be at most ${MAX_APP_NAME_CHARS} characters`);
    out.name = body.name.trim();
  }
  if (body.handle !== undefined && body.handle !== null) {
    if (typeof body.handle === 'string' && longerThan(body.handle, MAX_APP_HANDLE_CHARS)) throw badRequest(`handle must be at most ${MAX_APP_HANDLE_CHARS} characters`);
    const handle = typeof body.handle === 'string' ? slugify(body.handle) : '';
    if (!handle || handle !== body.handle) throw badRequest('handle must be lowercase letters, digits and -');
    out.handle = handle;
  }
  if (creating || body.appUrl !== undefined) out.appUrl = await url('appUrl', body.appUrl, config);
  if (body.redirectUrls !== undefined) {
    if (!Array.isArray(body.redirectUrls)) throw badRequest('redirectUrls must be an array of URLs');
    if (body.redirectUrls.length > MAX_REDIRECT_URLS) throw badRequest(`redirectUrls must have at most ${MAX_REDIRECT_URLS} URLs`);
    out.redirectUrls = [];
    for (const [i, u] of body.redirectUrls.entries()) out.redirectUrls.push(await url(`redirectUrls[${i}]`, u, config));
  }
  if (creating || body.scopes !== undefined) {
    if (!Array.isArray(body.scopes)) throw badRequest('scopes must be an array of scopes');
    const unknown = body.scopes.filter((s: unknown) => !isScope(s));
    if (unknown.length) throw badRequest(`unknown scope: ${describeRefused(unknown)}`);
    out.scopes = [...new Set<string>(body.scopes)];
  }
  if (body.tier !== undefined) {
    // Own keys only: `'toString' in TIER_LIMITS` is true and would reach the database's CHECK as a 500.
    if (typeof body.tier !== 'string' || !Object.hasOwn(TIER_LIMITS, body.tier)) throw badRequest('tier must be free, basic, pro or enterprise');
    out.tier = body.tier;
  }
  if (body.gdprUrls !== undefined) {
    if (body.gdprUrls === null) out.gdprUrls = null;
    else {
      if (typeof body.gdprUrls !== 'object') throw badRequest('gdprUrls must be an object');
      out.gdprUrls = {};
      for (const key of GDPR_KEYS) {
        if (body.gdprUrls[key] !== undefined && body.gdprUrls[key] !== null) out.gdprUrls[key] = await url(`gdprUrls.${key}`, body.gdprUrls[key], config);
      }
    }
  }
  if (body.extensions !== undefined) out.extensions = await readExtensions(body.extensions, config);
  if (body.pricing !== undefined) out.pricing = readPricing(body.pricing);
  if (body.version !== undefined) {
    if (typeof body.version === 'string' && longerThan(body.version, MAX_APP_VERSION_CHARS)) throw badRequest(`version must be at most ${MAX_APP_VERSION_CHARS} characters`);
    if (typeof body.version !== 'string' || !SEMVER.test(body.version)) throw badRequest('version must be a semantic version such as 1.2.0');
    out.version = body.version;
  }
  return out;
}

/**
 * `extensions`, checked key by key. A key given as null is kept as null (named, no value): create
 * leaves it out, PATCH removes it (`mergeExtensions`).
 */
async function readExtensions(value: any, config: Config): Promise<ExtensionsPatch> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('extensions must be an object');
  const out: ExtensionsPatch = {};
  if (value.webhooks === null) out.webhooks = null;
  else if (value.webhooks !== undefined) {
    if (!Array.isArray(value.webhooks)) throw badRequest('extensions.webhooks must be an array');
    if (value.webhooks.length > MAX_MANIFEST_WEBHOOKS) throw badRequest(`extensions.webhooks must have at most ${MAX_MANIFEST_WEBHOOKS} webhooks`);
    const webhooks: { topic: string; uri: string }[] = [];
    // A topic and address given twice would deliver every event twice (C8.2: one delivery per
    // manifest webhook); refused like a function's repeated handle (C11.1). Addresses are compared
    // as stored (normalised), so `HTTPS://Hooks.example.com/a` repeats `https://hooks.example.com/a`.
    const seen = new Map<string, number>();
    for (const [i, w] of value.webhooks.entries()) {
      if (!isSubscribableTopic(w?.topic)) throw badRequest(`extensions.webhooks[${i}].topic is not a subscribable topic`);
      const webhook = { topic: w.topic, uri: await url(`extensions.webhooks[${i}].uri`, w.uri, config) };
      const key = `${webhook.topic} ${webhook.uri}`;
      const first = seen.get(key);
      if (first !== undefined) throw badRequest(`extensions.webhooks[${i}] repeats extensions.webhooks[${first}]: ${webhook.topic} to ${webhook.uri}`);
      seen.set(key, i);
      webhooks.push(webhook);
    }
    out.webhooks = webhooks;
  }
  if (value.salesChannel === null) out.salesChannel = null;
  else if (value.salesChannel !== undefined) {
    if (typeof value.salesChannel !== 'boolean') throw badRequest('extensions.salesChannel must be a boolean');
    out.salesChannel = value.salesChannel;
  }
  // C15.3: a shipping app's live-rate endpoint, under the address rules of webhooks (C8.9).
  if (value.shipping === null) out.shipping = null;
  else if (value.shipping !== undefined) {
    if (typeof value.shipping !== 'object' || Array.isArray(value.shipping)) throw badRequest('extensions.shipping must be an object');
    out.shipping = { ratesUrl: await url('extensions.shipping.ratesUrl', value.shipping.ratesUrl, config) };
  }
  // C11.1: declarative functions, parsed and checked now rather than failing at a checkout.
  if (value.functions === null) out.functions = null;
  else if (value.functions !== undefined) out.functions = await readManifestFunctions(value.functions);
  return out;
}

/** The extensions a create stores: the keys given a value (null names nothing to keep). */
export function extensionsOf(patch: ExtensionsPatch | undefined): Extensions {
  return mergeExtensions({}, patch ?? {});
}

/**
 * C3.2 PATCH of `extensions`: JSON Merge Patch (RFC 7396) one level down. A key left out keeps its
 * value, a key given replaces its value whole (an array too), a key given as null is removed.
 */
export function mergeExtensions(current: Extensions, patch: ExtensionsPatch): Extensions {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged as Extensions;
}

function readPricing(value: any): NonNullable<AppFields['pricing']> {
  if (value?.type === 'free') return { type: 'free' };
  if (value?.type !== 'recurring') throw badRequest('pricing.type must be free or recurring');
  // A JSON number or a decimal string, at most two decimals, refused rather than rounded (parseMoney, C5.2).
  let minor: number | null = null;
  try {
    minor = typeof value.amount === 'number' || typeof value.amount === 'string' ? parseMoney(value.amount) : null;
  } catch (err) {
    if (err instanceof AmountTooLargeError) throw badRequest('pricing.amount is too large');
  }
  // A third decimal is refused for every currency, KWD's fils included: the platform keeps every
  // price in hundredths (C5.2), so the message says that rather than "not a decimal".
  if (minor === null && /^\s*\d+\.\d{3,}\s*$/.test(String(value.amount ?? ''))) {
    throw badRequest('pricing.amount has at most two decimals: the platform keeps prices in hundredths of the currency (9.999 is refused, not rounded)');
  }
  if (minor === null || minor <= 0) throw badRequest('pricing.amount must be a positive decimal string such as "9.99"');
  // C5.2, C10.2: every charge, commission split and USD roll-up is exact integer arithmetic. A
  // price past that range used to be accepted and then skipped by the billing job for ever (a paid
  // app billed nothing); the bound is the catalog's (src/catalog/input.ts), far below 2^53.
  if (minor > MAX_PRICE_MINOR) throw badRequest('pricing.amount is too large');
  const currency = isoCurrency(value.currency);
  if (!currency) throw badRequest('pricing.currency must be an ISO 4217 currency code');
  if (!fitsMinorUnits(minor, currency)) throw badRequest(`pricing.amount must be a whole number of ${currency} minor units (${minorDigits(currency)} decimals)`);
  if (value.interval !== 'month' && value.interval !== 'year') throw badRequest('pricing.interval must be month or year');
  const trialDays = value.trialDays ?? 0;
  if (!Number.isInteger(trialDays) || trialDays < 0 || trialDays > 365) throw badRequest('pricing.trialDays must be a whole number of days');
  return { type: 'recurring', amount: formatMinor(minor), currency, interval: value.interval, trialDays };
}
