// Configuration of contract C1.2, parsed once at start into a typed object. Nothing else in the
// service reads process.env: everything it needs is passed down from here. The variables and their
// schemas are in src/config/variables.ts, the rules between them in src/config/rules.ts.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseVariables, VARIABLES, type Env, type LOG_LEVELS } from './config/variables.js';
import { refusal } from './config/refusal.js';
import { createFileExclusively, readCreatedFile } from './exclusive-file.js';
import { ruleProblems } from './config/rules.js';

export type ProcessRole = 'api' | 'worker' | 'all';

export interface Config {
  production: boolean;
  port: number;
  host: string;
  baseUrl: string;
  siteUrl: string;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  secret: string;
  /** Where the secret came from; a generated one is only ever used in development. */
  secretSource: 'env' | 'generated' | 'data-dir';
  adminEmail: string | null;
  adminPassword: string | null;
  seed: 'demo' | 'none' | 'auto';
  testClock: boolean;
  allowPrivateWebhooks: boolean;
  role: ProcessRole;
  commissionRate: number;
  fxRates: Record<string, number>;
  stripeWebhookSecret: string | null;
  smtpUrl: string | null;
  deliveryRetentionDays: number;
  /**
   * Fastify's `trustProxy`: which peers' X-Forwarded-For names the client (`request.ip`, the login
   * throttle's client address). `false`: none, the socket's address is the client's; a list: the
   * proxies' addresses, CIDR ranges or range names (proxy-addr's loopback, linklocal, uniquelocal).
   */
  trustProxy: false | string[];
  logLevel: (typeof LOG_LEVELS)[number];
}

/**
 * The service refuses to start: one line per problem, each naming the variable, its value (secrets
 * masked) and what is allowed.
 */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/**
 * Parse and check the whole environment before anything is touched (the data dir, the database).
 * `persistSecret: false` (tests) never writes a development secret into the data dir.
 */
export function loadConfig(env: Env = process.env, options: { persistSecret?: boolean } = {}): Config {
  const { values: v, invalid } = parseVariables(env);
  const problems = [
    ...invalid.map((name) => refusal(env, name, `must be ${VARIABLES[name].allowed}`)),
    ...ruleProblems(env, v),
  ];
  if (problems.length) throw new ConfigError(problems);

  const production = v.NODE_ENV === 'production';
  const port = v.PORT ?? 3000;
  const baseUrl = (v.SVC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const dataDir = resolve(v.SVC_DATA_DIR ?? './data');

  let secret = v.SVC_SECRET;
  let secretSource: Config['secretSource'] = 'env';
  if (!secret) {
    const kept = options.persistSecret === false ? null : readOrCreateDevSecret(env, dataDir);
    secret = kept?.secret ?? randomBytes(32).toString('base64url');
    secretSource = kept?.created === false ? 'data-dir' : 'generated';
  }

  return {
    production,
    port,
    host: v.HOST ?? (production ? '0.0.0.0' : '127.0.0.1'),
    baseUrl,
    siteUrl: (v.SVC_SITE_URL ?? baseUrl).replace(/\/+$/, ''),
    dataDir,
    databaseUrl: v.DATABASE_URL ?? null,
    redisUrl: v.REDIS_URL ?? null,
    secret,
    secretSource,
    adminEmail: v.SVC_ADMIN_EMAIL ?? null,
    adminPassword: v.SVC_ADMIN_PASSWORD ?? null,
    // 'auto' = demo on an empty database in development (decided once the database is open).
    seed: v.SVC_SEED ?? (production ? 'none' : 'auto'),
    testClock: v.SVC_TEST_CLOCK ?? false,
    allowPrivateWebhooks: v.SVC_ALLOW_PRIVATE_WEBHOOKS ?? !production,
    role: v.SVC_ROLE ?? 'all',
    commissionRate: v.SVC_COMMISSION_RATE ?? 0.2,
    fxRates: v.SVC_FX_RATES ?? {},
    stripeWebhookSecret: v.SVC_STRIPE_WEBHOOK_SECRET ?? null,
    smtpUrl: v.SMTP_URL ?? null,
    deliveryRetentionDays: v.SVC_DELIVERY_RETENTION_DAYS ?? 30,
    trustProxy: v.SVC_TRUST_PROXY ?? false,
    logLevel: v.LOG_LEVEL ?? (production ? 'info' : 'warn'),
  };
}

/**
 * Development only: one secret generated on first start and kept beside the embedded database.
 * Several processes may start together on one data dir (an api and a worker on one machine, with
 * DATABASE_URL and no SVC_SECRET): the file is created exclusively and complete, so exactly one of
 * them generates the secret and every other one reads that one (docs/decisions.md, "Processes").
 */
function readOrCreateDevSecret(env: Env, dataDir: string): { secret: string; created: boolean } {
  const file = join(dataDir, 'svc-secret');
  let kept: string;
  try {
    if (!existsSync(file)) {
      // Its owner's alone, as the database in it (src/db/open.ts).
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      const generated = randomBytes(32).toString('base64url');
      if (createFileExclusively(file, generated + '\n', 0o600)) return { secret: generated, created: true };
    }
    // Kept by an earlier start, or created a moment ago by a process starting beside this one.
    kept = readCreatedFile(file);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ConfigError([`${refusal(env, 'SVC_DATA_DIR', `cannot keep the development secret in ${file} (${reason})`)}`]);
  }
  if (kept) return { secret: kept, created: false };
  // Its creator died before writing it: refuse, naming the file, rather than run on an empty secret.
  throw new ConfigError([`${refusal(env, 'SVC_DATA_DIR', `the development secret file ${file} is empty; remove it and start again`)}`]);
}
