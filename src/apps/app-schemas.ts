// The app manifest (C3.1) as the developer API takes it and shows it. The request schema says what
// each field is; src/apps/app-input.ts keeps the rules a schema cannot say (a target address that
// must be safe to call, a handle that must already be a slug, pricing whose amount fits its
// currency), in C3.1's words.
import { Type } from 'typebox';
import { Id, Money, nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { MAX_CONFIGURATION_BYTES, MAX_EXPRESSION_CHARS, TARGETS } from '../functions/runtime/index.js';
import {
  MAX_APP_HANDLE_CHARS, MAX_APP_NAME_CHARS, MAX_APP_VERSION_CHARS, MAX_MANIFEST_FUNCTIONS, MAX_MANIFEST_WEBHOOKS, MAX_REDIRECT_URLS,
} from './app-input.js';
import { MAX_FUNCTION_HANDLE_CHARS, MAX_FUNCTION_TITLE_CHARS } from '../functions/manifest-functions.js';

// The reader's words for a URL that is missing or not text (src/net/address-safety.ts).
const URL_WORDS = 'must be an absolute URL';
const Url = (description: string) => Type.String({ description: `${description}; an http(s) URL that is safe to call (C8.9)`, 'x-error': URL_WORDS });

const WebhookExtension = Type.Object({ topic: Type.String({ description: 'a subscribable topic (C8.1)' }), uri: Url('where the topic is delivered') });
/** The reader's words for a text over its length (src/apps/app-input.ts), so the API and the dashboard say the same. */
const atMost = (max: number) => ({ maxLength: `must be at most ${max} characters` });
const GdprUrls = Type.Object({
  customerDataRequest: Type.Optional(nullable(Url('customers/data_request'))),
  customerRedact: Type.Optional(nullable(Url('customers/redact'))),
  shopRedact: Type.Optional(nullable(Url('shop/redact'))),
});

/** A function as the app shows it: as declared, with title null and configuration {} when not given. */
const FunctionDeclaration = Type.Object({
  handle: Type.String({ description: 'lowercase letters, digits and -; unique within the app' }),
  target: StringEnum(TARGETS, { description: 'where the function runs at a checkout (C11.3)' }),
  title: nullable(Type.String()),
  expression: Type.String({ description: `CEL, at most ${MAX_EXPRESSION_CHARS} characters, over \`input\` and \`configuration\` (docs/functions.md)` }),
  configuration: Type.Record(Type.String(), Type.Unknown(), { description: `a JSON object of at most ${MAX_CONFIGURATION_BYTES} bytes` }),
});

/**
 * A function as the manifest gives it. Its fields are checked by src/functions/manifest-functions.ts,
 * whose 400 names the function's handle (C11.1), which a schema's message could not.
 */
const FunctionDeclarationBody = Type.Unknown({
  description: `{ handle, target, title?, expression, configuration? }: handle lowercase letters, digits and -, at most ${MAX_FUNCTION_HANDLE_CHARS} characters (unique within the app); `
    + `title at most ${MAX_FUNCTION_TITLE_CHARS} characters; target one of ${TARGETS.join(', ')}; expression CEL of at most ${MAX_EXPRESSION_CHARS} characters; configuration a JSON object of at most ${MAX_CONFIGURATION_BYTES} bytes (default {})`,
});

/**
 * `extensions` (C3.1): webhooks the app subscribes on install, the sales channel, a shipping app's
 * rates endpoint (C15.3) and declarative functions (C11.1).
 */
export const ExtensionsSchema = Type.Object({
  webhooks: Type.Optional(Type.Array(WebhookExtension)),
  salesChannel: Type.Optional(Type.Boolean()),
  shipping: Type.Optional(Type.Object({ ratesUrl: Url('live shipping rates are asked here (C15.3)') })),
  functions: Type.Optional(Type.Array(FunctionDeclaration)),
});

const TIERS = ['free', 'basic', 'pro', 'enterprise'] as const;
const Pricing = Type.Object({
  type: StringEnum(['free', 'recurring']),
  amount: Type.Optional(Money('recurring: the price, a positive decimal string in whole minor units of the currency')),
  currency: Type.Optional(Type.String({ description: 'recurring: ISO 4217 code' })),
  interval: Type.Optional(StringEnum(['month', 'year'])),
  trialDays: Type.Optional(Type.Integer({ description: 'recurring: whole days from 0 to 365 (default 0)' })),
});

/** The reader's words for a list over its length (src/apps/app-input.ts). */
const atMostItems = (max: number, things: string) => ({ maxItems: `must have at most ${max} ${things}` });

/**
 * `extensions` as a request gives it. On PATCH it is merged by key (JSON Merge Patch one level
 * down, docs/decisions.md): a key left out keeps its value, a key given replaces it whole, a key
 * given as null removes it. On create, a null key is the same as one left out.
 */
const ExtensionsBody = (creating: boolean) => Type.Object({
  webhooks: Type.Optional(nullable(Type.Array(WebhookExtension, {
    maxItems: MAX_MANIFEST_WEBHOOKS, 'x-error': atMostItems(MAX_MANIFEST_WEBHOOKS, 'webhooks'),
    description: `each topic and address at most once (400 naming the repeat); at most ${MAX_MANIFEST_WEBHOOKS}; null: none`,
  }))),
  salesChannel: Type.Optional(nullable(Type.Boolean({ description: 'null: not a sales channel (the key is removed)' }))),
  // null removes the rates endpoint; a missing ratesUrl reads as the URL it is not.
  shipping: Type.Optional(nullable(Type.Object({ ratesUrl: Url('live shipping rates are asked here (C15.3)') }, { 'x-error': { required: URL_WORDS } }))),
  functions: Type.Optional(nullable(Type.Array(FunctionDeclarationBody, {
    maxItems: MAX_MANIFEST_FUNCTIONS, 'x-error': atMostItems(MAX_MANIFEST_FUNCTIONS, 'functions'),
    description: `at most ${MAX_MANIFEST_FUNCTIONS}; null: none`,
  }))),
}, {
  description: creating
    ? 'the manifest\'s extensions (C3.1); a key given as null is left out'
    : 'merged by key (JSON Merge Patch, RFC 7396, one level down): a key left out is kept, a key given replaces its value '
      + '(webhooks and functions whole), a key given as null is removed. Functions are synced to the stores only when `functions` is given',
});

/** The create body (`name`, `appUrl` and `scopes` required) and, all optional, the update body. */
export function appBodySchema(creating: boolean) {
  const required = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => (creating ? schema : Type.Optional(schema));
  return Type.Object({
    name: required(Type.String({ maxLength: MAX_APP_NAME_CHARS, description: `at most ${MAX_APP_NAME_CHARS} characters`, 'x-error': atMost(MAX_APP_NAME_CHARS) })),
    handle: Type.Optional(nullable(Type.String({
      maxLength: MAX_APP_HANDLE_CHARS, description: `lowercase letters, digits and -, at most ${MAX_APP_HANDLE_CHARS} characters; default: from the name`, 'x-error': atMost(MAX_APP_HANDLE_CHARS),
    }))),
    appUrl: required(Url("the app's address")),
    redirectUrls: Type.Optional(Type.Array(Url('an OAuth redirect address'), {
      maxItems: MAX_REDIRECT_URLS, description: `at most ${MAX_REDIRECT_URLS}`, 'x-error': atMostItems(MAX_REDIRECT_URLS, 'URLs'),
    })),
    scopes: required(Type.Array(Type.String({ description: 'a scope of C6.4' }))),
    tier: Type.Optional(StringEnum(TIERS, { description: 'the rate-limit tier (C6.5)' })),
    gdprUrls: Type.Optional(nullable(GdprUrls)),
    extensions: Type.Optional(ExtensionsBody(creating)),
    pricing: Type.Optional(Type.Object({
      ...Pricing.properties,
      amount: Type.Optional(Type.Union([Type.String(), Type.Number()], { description: 'recurring: a positive decimal string such as "9.99", at most two decimals and at most 10000000000000.00 (a number with at most two decimals is taken as its decimal text; 9.999 is refused, not rounded)' })),
    })),
    version: Type.Optional(Type.String({ maxLength: MAX_APP_VERSION_CHARS, description: `a semantic version such as 1.2.0, at most ${MAX_APP_VERSION_CHARS} characters`, 'x-error': atMost(MAX_APP_VERSION_CHARS) })),
  });
}

export const AppSchema = Type.Object({
  appId: Id(),
  name: Type.String(),
  handle: Type.String(),
  clientId: Type.String(),
  clientSecret: Type.Optional(Type.String({ description: "the app's client secret: on the app's own reads only, never in a list" })),
  appUrl: Type.String(),
  redirectUrls: Type.Array(Type.String()),
  scopes: Type.Array(Type.String()),
  tier: StringEnum(TIERS),
  gdprUrls: nullable(GdprUrls),
  extensions: ExtensionsSchema,
  pricing: Pricing,
  version: Type.String(),
  rating: Type.Number({ description: 'average review rating, 0 without reviews' }),
  reviewCount: Type.Integer(),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
