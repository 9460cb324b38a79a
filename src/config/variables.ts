// The environment variables of contract C1.2 (and ours), one schema each, with the words a refusal
// uses for what is allowed. Parsing is zod's: nothing here is read by hand.
import { z } from 'zod';
import { shorterThan } from '../text.js';

/** pino's levels: what Fastify's logger accepts. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** Platform JWTs are HS256: RFC 7518 section 3.2 wants a key of at least 256 bits. */
export const MIN_SECRET_LENGTH = 32;
/** The accounts' own rule (src/accounts/accounts.service.ts), so the operator can log in. */
export const MIN_ADMIN_PASSWORD_LENGTH = 8;

const flag = z.stringbool({ truthy: ['1', 'true', 'on', 'yes'], falsy: ['0', 'false', 'off', 'no'] });
const webUrl = z.url({ protocol: /^https?$/ }).refine((v) => !/[?#]/.test(v), 'no query or fragment');
const wholeNumber = z.string().regex(/^\d+$/).transform(Number);
/**
 * Text of at least `min` characters, counted as every text limit of the service is (code points,
 * src/text.ts): zod's `.min()` counts UTF-16 units, so four emoji passed for eight characters.
 */
const atLeastChars = (min: number) => z.string().refine((v) => !shorterThan(v, min));
const fxRates = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not JSON' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string().regex(/^[A-Z]{3}$/), z.number().positive()));

/** proxy-addr's names for address ranges, which Fastify's `trustProxy` accepts beside addresses. */
export const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'] as const;
/** A range of every address (`0.0.0.0/0`, `::/0`): trusting it is trusting `true`. */
const everyAddress = (cidr: string) => /\/0+$/.test(cidr);
const proxyAddress = z.union([
  z.enum(PROXY_RANGE_NAMES),
  z.ipv4(),
  z.ipv6(),
  z.cidrv4().refine((v) => !everyAddress(v)),
  z.cidrv6().refine((v) => !everyAddress(v)),
]);
/**
 * Which peers may say who the client is (X-Forwarded-For), as Fastify's `trustProxy` takes it: the
 * proxies' addresses. `false` is the default written out. Refused: `true` and a range of every
 * address (they take the left-most X-Forwarded-For entry, which the client writes itself), and a
 * number of hops (Fastify 5.12 ignores one: a count cannot tell a proxy from a client that reaches
 * the service directly).
 */
const trustProxy = z.union([
  z.literal('false').transform(() => false as const),
  z
    .string()
    .transform((list) => list.split(',').map((entry) => entry.trim()))
    .pipe(z.array(proxyAddress).min(1)),
]);

/**
 * How a value may be shown in a refusal: `plain`, `secret` (never shown, only its length) or `url`
 * (shown with any password in it masked).
 */
export type Exposure = 'plain' | 'secret' | 'url';

interface Variable {
  schema: z.ZodType;
  allowed: string;
  exposure?: Exposure;
  /** Parsed as written, spaces at its ends included (a blank value is still unset). */
  verbatim?: boolean;
}

const variable = <T extends z.ZodType>(allowed: string, schema: T, exposure: Exposure = 'plain', verbatim = false) => ({ allowed, schema, exposure, verbatim });

export const VARIABLES = {
  NODE_ENV: variable('development, production or test', z.enum(['development', 'production', 'test'])),
  PORT: variable('a whole number from 1 to 65535', wholeNumber.pipe(z.number().min(1).max(65535))),
  HOST: variable('an IP address or a host name', z.union([z.ipv4(), z.ipv6(), z.hostname()])),
  SVC_BASE_URL: variable('an http:// or https:// URL without query or fragment', webUrl),
  SVC_SITE_URL: variable('an http:// or https:// URL without query or fragment', webUrl),
  SVC_DATA_DIR: variable('a directory path', z.string()),
  DATABASE_URL: variable('a postgres:// or postgresql:// URL', z.url({ protocol: /^postgres(ql)?$/ }), 'url'),
  // Its path, if any, is the database number: another path passed here and failed the started
  // service seconds later (ERR value is not an integer), without naming the variable.
  REDIS_URL: variable('a redis:// or rediss:// URL whose path, if any, is a database number (/0)', z.url({ protocol: /^rediss?$/ }).refine((u) => !URL.canParse(u) || /^(\/\d*)?$/.test(new URL(u).pathname)), 'url'),
  SMTP_URL: variable('an smtp:// or smtps:// URL', z.url({ protocol: /^smtps?$/ }), 'url'),
  SVC_SECRET: variable(`at least ${MIN_SECRET_LENGTH} characters`, atLeastChars(MIN_SECRET_LENGTH), 'secret'),
  SVC_ADMIN_EMAIL: variable('an email address', z.email()),
  // Verbatim: login compares a password as sent, spaces included, so a trimmed one would not log in (C1.2).
  SVC_ADMIN_PASSWORD: variable(`at least ${MIN_ADMIN_PASSWORD_LENGTH} characters`, atLeastChars(MIN_ADMIN_PASSWORD_LENGTH), 'secret', true),
  SVC_SEED: variable('demo or none', z.enum(['demo', 'none'])),
  SVC_TEST_CLOCK: variable('a boolean: 1/0, true/false, on/off or yes/no', flag),
  SVC_ALLOW_PRIVATE_WEBHOOKS: variable('a boolean: 1/0, true/false, on/off or yes/no', flag),
  SVC_ROLE: variable('api, worker or all', z.enum(['api', 'worker', 'all'])),
  SVC_COMMISSION_RATE: variable('a number from 0 to 1, e.g. 0.20', z.string().regex(/^\d*\.?\d+$/).transform(Number).pipe(z.number().max(1))),
  SVC_FX_RATES: variable('a JSON object of ISO 4217 codes to positive numbers, e.g. {"EUR":1.08}', fxRates),
  SVC_STRIPE_WEBHOOK_SECRET: variable('the signing secret of the payment processor', z.string(), 'secret'),
  SVC_DELIVERY_RETENTION_DAYS: variable('a whole number of days from 1', wholeNumber.pipe(z.number().min(1))),
  SVC_TRUST_PROXY: variable(
    'false or a comma-separated list of the proxies\' IP addresses or CIDR ranges (or loopback, linklocal, uniquelocal); not true, a hop count or a range of every address (a client could choose its own address)',
    trustProxy,
  ),
  LOG_LEVEL: variable(LOG_LEVELS.join(', '), z.enum(LOG_LEVELS)),
} satisfies Record<string, Variable>;

export type VariableName = keyof typeof VARIABLES;

/** What the schemas give: each variable parsed, or undefined when it is unset or blank. */
export type ParsedEnv = { [K in VariableName]?: z.output<(typeof VARIABLES)[K]['schema']> };

/** A blank value counts as unset (`PORT= npm start` is the default port, not port 0). */
export const present = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value.trim());

export type Env = Record<string, string | undefined>;

/** Every variable checked on its own, so every bad one is reported (not just the first). */
export function parseVariables(env: Env): { values: ParsedEnv; invalid: VariableName[] } {
  const values: Record<string, unknown> = {};
  const invalid: VariableName[] = [];
  for (const [name, { schema, verbatim }] of Object.entries(VARIABLES) as [VariableName, Variable][]) {
    if (present(env[name]) === undefined) continue;
    const raw = verbatim ? env[name]! : present(env[name])!;
    const result = schema.safeParse(raw);
    if (result.success) values[name] = result.data;
    else invalid.push(name);
  }
  return { values: values as ParsedEnv, invalid };
}
