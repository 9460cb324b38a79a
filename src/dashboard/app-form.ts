// The app form (create and edit) as a page sends it, turned into the very body the developer API
// takes (C3.1), and the API's 400/409 message turned back into the field it names, so the page
// shows the service's own words next to the field.
import { Type, type Static } from 'typebox';
import { SCOPES } from '../oauth/scopes.js';
import { TIER_LIMITS } from '../ratelimit/limiter.js';
import { parseJsonField } from '../http/input-guard.js';
import { badRequest } from '../http/errors.js';

const text = Type.Optional(Type.String());
const texts = Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())]));

export const AppForm = Type.Object({
  _csrf: text,
  name: text,
  handle: text,
  appUrl: text,
  redirectUrls: text,
  scopes: texts,
  tier: text,
  version: text,
  customerDataRequest: text,
  customerRedact: text,
  shopRedact: text,
  pricingType: text,
  amount: text,
  currency: text,
  interval: text,
  trialDays: text,
  webhooks: text,
  salesChannel: text,
  ratesUrl: text,
  functions: text,
});
export type AppFormValues = Static<typeof AppForm>;

export const ALL_SCOPES = SCOPES;
export const TIERS = Object.keys(TIER_LIMITS);

const lines = (value: string | undefined) => (value ?? '').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
/**
 * A field is "not given" only when it is empty. Anything else goes to the service as typed, so the
 * page takes exactly what the API takes: " 1.0.0" or a handle of spaces is refused in the API's
 * words, not quietly trimmed or dropped. (URLs, amounts and currencies are read by the service the
 * same way whether trimmed or not: a URL parser drops outer spaces, `parseMoney` and `isoCurrency` trim.)
 */
const given = (value: string | undefined): value is string => value !== undefined && value !== '';

/**
 * Trial days as the API's JSON integer is written: decimal digits. Anything else (" 7 ", "1e1",
 * "0x10", "7.5") is passed on as text, which the service refuses as it refuses a string in JSON
 * ("pricing.trialDays must be a whole number of days"); Number() took "0x10" as 16 and " 7 " as 7.
 */
const trialDaysOf = (value: string): number | string => (/^[0-9]+$/.test(value) ? Number(value) : value);

/** A pricing type other than the two the API knows goes on as sent, for the service to refuse. */
function pricingOf(form: AppFormValues): Record<string, unknown> {
  if (!given(form.pricingType) || form.pricingType === 'free') return { type: 'free' };
  if (form.pricingType !== 'recurring') return { type: form.pricingType };
  return {
    type: 'recurring',
    amount: form.amount ?? '',
    currency: form.currency ?? '',
    interval: form.interval,
    ...(given(form.trialDays) ? { trialDays: trialDaysOf(form.trialDays) } : {}),
  };
}

/** One webhook a line: a topic, spaces, an address; a line of more parts names no one webhook. */
function webhooksOf(value: string | undefined): { topic: string; uri: string }[] {
  return lines(value).map((line, i) => {
    const parts = line.split(/\s+/);
    if (parts.length > 2) throw badRequest(`extensions.webhooks[${i}] must be a topic and an address, separated by a space`);
    return { topic: parts[0] ?? '', uri: parts[1] ?? '' };
  });
}

/** The developer API's body for the form's values; a form-only problem (JSON that does not parse) is a 400 naming its field. */
export function appBodyOf(form: AppFormValues, creating: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: form.name ?? '',
    appUrl: form.appUrl ?? '',
    scopes: ([] as string[]).concat(form.scopes ?? []),
    redirectUrls: lines(form.redirectUrls),
  };
  if (given(form.handle)) body.handle = form.handle;
  else if (!creating) body.handle = null;
  if (given(form.tier)) body.tier = form.tier;
  if (given(form.version)) body.version = form.version;
  const gdpr = { customerDataRequest: form.customerDataRequest, customerRedact: form.customerRedact, shopRedact: form.shopRedact };
  body.gdprUrls = Object.values(gdpr).some(given) ? Object.fromEntries(Object.entries(gdpr).map(([k, v]) => [k, given(v) ? v : null])) : null;
  body.pricing = pricingOf(form);
  // The form shows the whole manifest, so it names every extension: a filled field replaces it, a
  // cleared one is null and removes it (the API merges `extensions` by key, docs/decisions.md).
  const webhooks = webhooksOf(form.webhooks);
  let functions: unknown = null;
  if (given(form.functions) && form.functions.trim() !== '') functions = parseJsonField(form.functions, 'extensions.functions');
  body.extensions = {
    webhooks: webhooks.length ? webhooks : null,
    salesChannel: form.salesChannel === 'on' ? true : null,
    shipping: given(form.ratesUrl) ? { ratesUrl: form.ratesUrl } : null,
    functions,
  };
  return body;
}

/** The form field a service message is about (its first words name it, C3.1 and C11.1); `form` when none. */
export function fieldOf(message: string): string {
  const first = message.split(/[\s:]/)[0];
  if (/^extensions\.webhooks/.test(first)) return 'webhooks';
  if (/^extensions\.shipping/.test(first)) return 'ratesUrl';
  if (/^extensions\.functions/.test(first)) return 'functions';
  if (/^extensions\.salesChannel/.test(first)) return 'salesChannel';
  if (/^redirectUrls/.test(first)) return 'redirectUrls';
  if (/^gdprUrls\./.test(first)) return first.slice('gdprUrls.'.length);
  if (/^pricing\./.test(first)) return ({ amount: 'amount', currency: 'currency', interval: 'interval', trialDays: 'trialDays' } as Record<string, string>)[first.slice(8)] ?? 'pricingType';
  if (/^unknown scope/.test(message) || first === 'scopes') return 'scopes';
  if (first === 'handle' || /^handle "/.test(message)) return 'handle';
  if (['name', 'appUrl', 'tier', 'version'].includes(first)) return first;
  return 'form';
}

interface AppViewLike {
  name: string;
  handle: string;
  appUrl: string;
  redirectUrls: string[];
  scopes: string[];
  tier: string;
  version: string;
  gdprUrls: { customerDataRequest?: string | null; customerRedact?: string | null; shopRedact?: string | null } | null;
  pricing: { type: string; amount?: string; currency?: string; interval?: string; trialDays?: number };
  extensions: { webhooks?: { topic: string; uri: string }[]; salesChannel?: boolean; shipping?: { ratesUrl: string }; functions?: unknown[] };
}

/** The form's values for an app as the API shows it (the edit page). */
export function formOf(app: AppViewLike): AppFormValues {
  return {
    name: app.name,
    handle: app.handle,
    appUrl: app.appUrl,
    redirectUrls: app.redirectUrls.join('\n'),
    scopes: app.scopes,
    tier: app.tier,
    version: app.version,
    customerDataRequest: app.gdprUrls?.customerDataRequest ?? '',
    customerRedact: app.gdprUrls?.customerRedact ?? '',
    shopRedact: app.gdprUrls?.shopRedact ?? '',
    pricingType: app.pricing.type,
    amount: app.pricing.amount ?? '',
    currency: app.pricing.currency ?? '',
    interval: app.pricing.interval ?? 'month',
    trialDays: String(app.pricing.trialDays ?? 0),
    webhooks: (app.extensions.webhooks ?? []).map((w) => `${w.topic} ${w.uri}`).join('\n'),
    salesChannel: app.extensions.salesChannel ? 'on' : undefined,
    ratesUrl: app.extensions.shipping?.ratesUrl ?? '',
    functions: app.extensions.functions?.length ? JSON.stringify(app.extensions.functions, null, 2) : '',
  };
}
