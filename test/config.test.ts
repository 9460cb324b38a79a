import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { tempDir } from './helpers/temp-dirs.js';

const tmp = () => tempDir('svc-config-');

describe('C1.2 configuration', () => {
  it('has the documented defaults in development', () => {
    const dir = tmp();
    const c = loadConfig({ SVC_DATA_DIR: dir });
    expect(c).toMatchObject({
      production: false, port: 3000, host: '127.0.0.1', baseUrl: 'http://localhost:3000', siteUrl: 'http://localhost:3000',
      dataDir: dir, databaseUrl: null, redisUrl: null, seed: 'auto', testClock: false, allowPrivateWebhooks: true,
      role: 'all', commissionRate: 0.2, fxRates: {}, stripeWebhookSecret: null, smtpUrl: null, deliveryRetentionDays: 30,
    });
  });

  it('generates a development secret once and keeps it in the data dir', () => {
    const dir = tmp();
    const first = loadConfig({ SVC_DATA_DIR: dir });
    const second = loadConfig({ SVC_DATA_DIR: dir });
    expect(first.secret).toBe(second.secret);
    expect(readFileSync(join(dir, 'svc-secret'), 'utf8').trim()).toBe(first.secret);
    expect(first.secretSource).toBe('generated');
    expect(second.secretSource).toBe('data-dir');
  });

  it('derives base and site URLs from PORT and accepts overrides', () => {
    expect(loadConfig({ PORT: '4100', SVC_SECRET: 'x'.repeat(32) }).baseUrl).toBe('http://localhost:4100');
    const c = loadConfig({ SVC_BASE_URL: 'https://api.example.com/', SVC_SECRET: 'x'.repeat(32) });
    expect(c.baseUrl).toBe('https://api.example.com');
    expect(c.siteUrl).toBe('https://api.example.com');
    expect(loadConfig({ SVC_SITE_URL: 'https://shop.example.com', SVC_SECRET: 'x'.repeat(32) }).siteUrl).toBe('https://shop.example.com');
  });

  it('production refuses to start without SVC_SECRET and DATABASE_URL', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SVC_SECRET and DATABASE_URL/);
    expect(() => loadConfig({ NODE_ENV: 'production', SVC_SECRET: 'x'.repeat(32) })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x' })).toThrow(/SVC_SECRET/);
  });

  it('production refuses the test clock (C12.1) and turns private webhooks off', () => {
    const env = { NODE_ENV: 'production', SVC_SECRET: 'x'.repeat(32), DATABASE_URL: 'postgres://db/x' };
    expect(() => loadConfig({ ...env, SVC_TEST_CLOCK: '1' })).toThrow(ConfigError);
    const c = loadConfig(env);
    expect(c).toMatchObject({ production: true, host: '0.0.0.0', allowPrivateWebhooks: false, seed: 'none', testClock: false });
  });

  it('rejects invalid values with a clear message', () => {
    const base = { SVC_SECRET: 'x'.repeat(32) };
    expect(() => loadConfig({ ...base, SVC_ROLE: 'both' })).toThrow(/SVC_ROLE/);
    expect(() => loadConfig({ ...base, PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ ...base, SVC_FX_RATES: '{"EUR":"x"}' })).toThrow(/SVC_FX_RATES/);
    expect(() => loadConfig({ ...base, SVC_FX_RATES: 'not json' })).toThrow(/SVC_FX_RATES/);
    expect(() => loadConfig({ ...base, SVC_COMMISSION_RATE: '1.5' })).toThrow(/SVC_COMMISSION_RATE/);
    expect(() => loadConfig({ ...base, SVC_TEST_CLOCK: 'maybe' })).toThrow(/boolean/);
    expect(() => loadConfig({ ...base, SVC_SEED: 'lots' })).toThrow(/SVC_SEED/);
  });

  it('parses roles, FX rates and flags', () => {
    const c = loadConfig({ SVC_SECRET: 'x'.repeat(32), SVC_ROLE: 'worker', SVC_FX_RATES: '{"EUR":1.08,"INR":0.012}', SVC_TEST_CLOCK: '1', SVC_ALLOW_PRIVATE_WEBHOOKS: 'off', REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(c).toMatchObject({ role: 'worker', fxRates: { EUR: 1.08, INR: 0.012 }, testClock: true, allowPrivateWebhooks: false, redisUrl: 'redis://127.0.0.1:6379' });
  });
});
