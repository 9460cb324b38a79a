// Configuration of contract C1.2, parsed once at start into a typed object. Nothing else in the
// service reads process.env: everything it needs is passed down from here.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

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
  logLevel: string;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function flag(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (['1', 'true', 'on', 'yes'].includes(value.toLowerCase())) return true;
  if (['0', 'false', 'off', 'no'].includes(value.toLowerCase())) return false;
  throw new ConfigError(`expected a boolean (1/0, true/false, on/off), got "${value}"`);
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value.trim() === '' ? null : value.trim();
}

/**
 * Parse the environment. `loadSecret` decides whether a development secret may be generated and
 * kept in the data dir (tests pass false and always give one).
 */
export function loadConfig(env: Env = process.env, options: { persistSecret?: boolean } = {}): Config {
  const production = (env.NODE_ENV ?? 'development') === 'production';
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT must be a port number, got "${env.PORT}"`);
  const host = nonEmpty(env.HOST) ?? (production ? '0.0.0.0' : '127.0.0.1');
  const baseUrl = (nonEmpty(env.SVC_BASE_URL) ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const siteUrl = (nonEmpty(env.SVC_SITE_URL) ?? baseUrl).replace(/\/+$/, '');
  const dataDir = resolve(nonEmpty(env.SVC_DATA_DIR) ?? './data');
  const databaseUrl = nonEmpty(env.DATABASE_URL);
  const testClock = flag(env.SVC_TEST_CLOCK, false);

  if (production) {
    const missing = ['SVC_SECRET', 'DATABASE_URL'].filter((name) => !nonEmpty(env[name]));
    if (missing.length) throw new ConfigError(`production mode requires ${missing.join(' and ')}`);
    if (testClock) throw new ConfigError('SVC_TEST_CLOCK is refused in production');
  }

  let secret = nonEmpty(env.SVC_SECRET);
  let secretSource: Config['secretSource'] = 'env';
  if (!secret) {
    const kept = options.persistSecret === false ? null : readOrCreateDevSecret(dataDir);
    secret = kept?.secret ?? randomBytes(32).toString('base64url');
    secretSource = kept?.created === false ? 'data-dir' : 'generated';
  }
  if (secret.length < 16) throw new ConfigError('SVC_SECRET must be at least 16 characters');

  const role = (nonEmpty(env.SVC_ROLE) ?? 'all') as ProcessRole;
  if (!['api', 'worker', 'all'].includes(role)) throw new ConfigError(`SVC_ROLE must be api, worker or all, got "${role}"`);

  const commissionRate = Number(env.SVC_COMMISSION_RATE ?? '0.20');
  if (!(commissionRate >= 0 && commissionRate <= 1)) throw new ConfigError('SVC_COMMISSION_RATE must be between 0 and 1');

  let fxRates: Record<string, number> = {};
  if (nonEmpty(env.SVC_FX_RATES)) {
    try {
      fxRates = JSON.parse(env.SVC_FX_RATES!);
    } catch {
      throw new ConfigError('SVC_FX_RATES must be a JSON object such as {"EUR":1.08}');
    }
    for (const [code, rate] of Object.entries(fxRates)) {
      if (!/^[A-Z]{3}$/.test(code) || typeof rate !== 'number' || !(rate > 0)) {
        throw new ConfigError(`SVC_FX_RATES: "${code}" must map an ISO 4217 code to a positive number`);
      }
    }
  }

  const seedValue = nonEmpty(env.SVC_SEED);
  if (seedValue && !['demo', 'none'].includes(seedValue)) throw new ConfigError('SVC_SEED must be demo or none');
  const retention = Number(env.SVC_DELIVERY_RETENTION_DAYS ?? 30);
  if (!(retention > 0)) throw new ConfigError('SVC_DELIVERY_RETENTION_DAYS must be a positive number');

  return {
    production,
    port,
    host,
    baseUrl,
    siteUrl,
    dataDir,
    databaseUrl,
    redisUrl: nonEmpty(env.REDIS_URL),
    secret,
    secretSource,
    adminEmail: nonEmpty(env.SVC_ADMIN_EMAIL),
    adminPassword: nonEmpty(env.SVC_ADMIN_PASSWORD),
    // 'auto' = demo on an empty database in development (decided once the database is open).
    seed: (seedValue as 'demo' | 'none' | null) ?? (production ? 'none' : 'auto'),
    testClock,
    allowPrivateWebhooks: flag(env.SVC_ALLOW_PRIVATE_WEBHOOKS, !production),
    role,
    commissionRate,
    fxRates,
    stripeWebhookSecret: nonEmpty(env.SVC_STRIPE_WEBHOOK_SECRET),
    smtpUrl: nonEmpty(env.SMTP_URL),
    deliveryRetentionDays: retention,
    logLevel: nonEmpty(env.LOG_LEVEL) ?? (production ? 'info' : 'warn'),
  };
}

/** Development only: one secret generated on first start and kept beside the embedded database. */
function readOrCreateDevSecret(dataDir: string): { secret: string; created: boolean } {
  const file = join(dataDir, 'svc-secret');
  if (existsSync(file)) return { secret: readFileSync(file, 'utf8').trim(), created: false };
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  return { secret, created: true };
}
