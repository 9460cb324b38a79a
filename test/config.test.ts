import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { VARIABLES } from '../src/config/variables.js';
import { maskUrl } from '../src/config/refusal.js';
import { tempDir } from './helpers/temp-dirs.js';
import { ROOT } from './helpers/process.js';

const tmp = () => tempDir('svc-config-');
const SECRET = 'x'.repeat(32);

/** The lines a refused configuration prints (one per problem); [] when it is accepted. */
function problems(env: Record<string, string>): string[] {
  try {
    loadConfig({ SVC_SECRET: SECRET, ...env }, { persistSecret: false });
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('C1.2 configuration', () => {
  it('has the documented defaults in development', () => {
    const dir = tmp();
    const c = loadConfig({ SVC_DATA_DIR: dir });
    expect(c).toMatchObject({
      production: false, port: 3000, host: '127.0.0.1', baseUrl: 'http://localhost:3000', siteUrl: 'http://localhost:3000',
      dataDir: dir, databaseUrl: null, redisUrl: null, seed: 'auto', testClock: false, allowPrivateWebhooks: true,
      role: 'all', commissionRate: 0.2, fxRates: {}, stripeWebhookSecret: null, smtpUrl: null, deliveryRetentionDays: 30,
      trustProxy: false,
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

  it('production refuses to start without SVC_SECRET and DATABASE_URL, one line each', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(problems({ NODE_ENV: 'production', SVC_SECRET: '' })).toEqual([
      expect.stringMatching(/^SVC_SECRET is not set: required in production/),
      expect.stringMatching(/^DATABASE_URL is not set: required in production/),
    ]);
    expect(problems({ NODE_ENV: 'production' })).toEqual([expect.stringMatching(/^DATABASE_URL is not set/)]);
  });

  it('production refuses the test clock (C12.1) and the demo data, and turns private webhooks off', () => {
    const env = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x' };
    expect(problems({ ...env, SVC_TEST_CLOCK: '1', SVC_SEED: 'demo' })).toEqual([
      'SVC_TEST_CLOCK="1": refused in production (it lets the operator move the clock)',
      'SVC_SEED="demo": refused in production (the demo accounts have published passwords)',
    ]);
    const c = loadConfig({ ...env, SVC_SECRET: SECRET });
    expect(c).toMatchObject({ production: true, host: '0.0.0.0', allowPrivateWebhooks: false, seed: 'none', testClock: false, logLevel: 'info' });
  });

  it('rejects invalid values, naming the variable, the value and what is allowed', () => {
    expect(problems({ SVC_ROLE: 'both' })).toEqual(['SVC_ROLE="both": must be api, worker or all']);
    expect(problems({ PORT: 'eighty' })).toEqual(['PORT="eighty": must be a whole number from 1 to 65535']);
    expect(problems({ SVC_FX_RATES: '{"EUR":"x"}' })).toEqual([expect.stringMatching(/^SVC_FX_RATES="\{\\"EUR\\":\\"x\\"\}": must be a JSON object/)]);
    expect(problems({ SVC_FX_RATES: 'not json' })).toEqual([expect.stringMatching(/^SVC_FX_RATES="not json": must be a JSON object of ISO 4217 codes/)]);
    expect(problems({ SVC_FX_RATES: '{"euro":1.1}' })).toHaveLength(1);
    expect(problems({ SVC_COMMISSION_RATE: '1.5' })).toEqual(['SVC_COMMISSION_RATE="1.5": must be a number from 0 to 1, e.g. 0.20']);
    expect(problems({ SVC_COMMISSION_RATE: '-0.1' })).toHaveLength(1);
    expect(problems({ SVC_TEST_CLOCK: 'maybe' })).toEqual(['SVC_TEST_CLOCK="maybe": must be a boolean: 1/0, true/false, on/off or yes/no']);
    expect(problems({ SVC_SEED: 'lots' })).toEqual(['SVC_SEED="lots": must be demo or none']);
    expect(problems({ SVC_DELIVERY_RETENTION_DAYS: '0' })).toEqual(['SVC_DELIVERY_RETENTION_DAYS="0": must be a whole number of days from 1']);
    expect(problems({ SVC_DELIVERY_RETENTION_DAYS: '7.5' })).toHaveLength(1);
    expect(problems({ HOST: 'not a host' })).toEqual(['HOST="not a host": must be an IP address or a host name']);
    expect(problems({ SVC_BASE_URL: 'localhost:3000' })).toEqual(['SVC_BASE_URL="localhost:3000": must be an http:// or https:// URL without query or fragment']);
    expect(problems({ SVC_SITE_URL: 'https://shop.example.com/?x=1' })).toHaveLength(1);
    expect(problems({ REDIS_URL: 'localhost:6379' })).toEqual(['REDIS_URL="localhost:6379": must be a redis:// or rediss:// URL whose path, if any, is a database number (/0)']);
    // Found in review: a path that is not a database number passed, and the started service died on it.
    expect(problems({ REDIS_URL: 'redis://127.0.0.1:6379/abc' })).toEqual(['REDIS_URL="redis://127.0.0.1:6379/abc": must be a redis:// or rediss:// URL whose path, if any, is a database number (/0)']);
    for (const ok of ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379/', 'redis://127.0.0.1:6379/9', 'rediss://:pw@cache:6380/0']) expect(problems({ REDIS_URL: ok }), ok).toEqual([]);
    expect(problems({ SMTP_URL: 'mail.example.com' })).toEqual(['SMTP_URL="mail.example.com": must be an smtp:// or smtps:// URL']);
    expect(problems({ SVC_ADMIN_EMAIL: 'ops', SVC_ADMIN_PASSWORD: 'operator-pass-1' })).toEqual(['SVC_ADMIN_EMAIL="ops": must be an email address']);
  });

  describe('the reported problems (issue 10)', () => {
    it('NODE_ENV=prod is refused, not run in development mode with the demo passwords', () => {
      expect(problems({ NODE_ENV: 'prod' })).toEqual(['NODE_ENV="prod": must be development, production or test']);
    });

    it('LOG_LEVEL=verbose is refused before anything starts', () => {
      expect(problems({ LOG_LEVEL: 'verbose' })).toEqual(['LOG_LEVEL="verbose": must be fatal, error, warn, info, debug, trace, silent']);
      expect(loadConfig({ SVC_SECRET: SECRET, LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    });

    it('DATABASE_URL=notaurl names the variable (not "getaddrinfo ENOTFOUND base")', () => {
      expect(problems({ DATABASE_URL: 'notaurl' })).toEqual(['DATABASE_URL="notaurl": must be a postgres:// or postgresql:// URL']);
      expect(loadConfig({ SVC_SECRET: SECRET, DATABASE_URL: 'postgresql:///svc?host=/run/postgresql' }).databaseUrl).toBe('postgresql:///svc?host=/run/postgresql');
    });

    it('SVC_ALLOW_PRIVATE_WEBHOOKS=maybe names the variable', () => {
      expect(problems({ SVC_ALLOW_PRIVATE_WEBHOOKS: 'maybe' })).toEqual(['SVC_ALLOW_PRIVATE_WEBHOOKS="maybe": must be a boolean: 1/0, true/false, on/off or yes/no']);
    });

    it('an empty PORT is the default port, not a random one; 0 and 65536 are refused', () => {
      expect(loadConfig({ SVC_SECRET: SECRET, PORT: '' }).port).toBe(3000);
      expect(loadConfig({ SVC_SECRET: SECRET, PORT: '  ' }).port).toBe(3000);
      expect(problems({ PORT: '0' })).toEqual(['PORT="0": must be a whole number from 1 to 65535']);
      expect(problems({ PORT: '65536' })).toHaveLength(1);
      expect(problems({ PORT: '1e3' })).toHaveLength(1);
      expect(loadConfig({ SVC_SECRET: SECRET, PORT: '65535' }).port).toBe(65535);
    });

    it('collects every problem, not just the first, one line each', () => {
      const lines = problems({ NODE_ENV: 'prod', LOG_LEVEL: 'verbose', DATABASE_URL: 'notaurl', SVC_ALLOW_PRIVATE_WEBHOOKS: 'maybe', PORT: 'x', SVC_ROLE: 'both' });
      expect(lines.map((l) => l.split(/[= ]/)[0])).toEqual(['NODE_ENV', 'PORT', 'DATABASE_URL', 'SVC_ALLOW_PRIVATE_WEBHOOKS', 'SVC_ROLE', 'LOG_LEVEL']);
      for (const line of lines) expect(line).not.toContain('\n');
    });

    it('SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD go together', () => {
      expect(problems({ SVC_ADMIN_EMAIL: 'ops@example.com' })).toEqual(['SVC_ADMIN_PASSWORD is not set: SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD are set together or not at all']);
      expect(problems({ SVC_ADMIN_PASSWORD: 'operator-pass-1' })).toEqual(['SVC_ADMIN_EMAIL is not set: SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD are set together or not at all']);
      expect(loadConfig({ SVC_SECRET: SECRET, SVC_ADMIN_EMAIL: 'ops@example.com', SVC_ADMIN_PASSWORD: 'operator-pass-1' })).toMatchObject({ adminEmail: 'ops@example.com', adminPassword: 'operator-pass-1' });
    });

    it('never prints a secret: SVC_SECRET, the admin password and the passwords in URLs are masked', () => {
      const lines = problems({
        SVC_SECRET: 'hunter2-secret',
        SVC_ADMIN_EMAIL: 'ops@example.com',
        SVC_ADMIN_PASSWORD: 'hunter2',
        DATABASE_URL: 'mysql://svc:hunter2@db.internal/svc',
        REDIS_URL: 'redis//:hunter2@cache:6379',
        SMTP_URL: 'mail://relay?user=svc&password=hunter2',
      });
      expect(lines).toEqual([
        'DATABASE_URL="mysql://svc:****@db.internal/svc": must be a postgres:// or postgresql:// URL',
        'REDIS_URL="redis//:****@cache:6379": must be a redis:// or rediss:// URL whose path, if any, is a database number (/0)',
        'SMTP_URL="mail://relay?user=svc&password=****": must be an smtp:// or smtps:// URL',
        'SVC_SECRET=(hidden, 14 characters): must be at least 32 characters',
        'SVC_ADMIN_PASSWORD=(hidden, 7 characters): must be at least 8 characters',
      ]);
      expect(lines.join('\n')).not.toContain('hunter2');
      expect(maskUrl('postgres://svc:p@ss/word@db/x')).toBe('postgres://svc:****@db/x');
      expect(maskUrl('rediss://token-only@cache')).toBe('rediss://****@cache');
      expect(maskUrl('postgres://db/x')).toBe('postgres://db/x');
    });

    it('refuses before the data dir is touched', () => {
      const dataDir = join(tmp(), 'not-yet');
      expect(() => loadConfig({ SVC_DATA_DIR: dataDir, LOG_LEVEL: 'verbose' })).toThrow(ConfigError);
      expect(existsSync(dataDir)).toBe(false);
    });

    it('a data dir where the development secret cannot be kept is a configuration problem, not a stack trace', () => {
      const file = join(tmp(), 'a-file');
      writeFileSync(file, 'x');
      expect(() => loadConfig({ SVC_DATA_DIR: join(file, 'data') })).toThrow(/^SVC_DATA_DIR=".*": cannot keep the development secret in .* \(ENOTDIR\)$/);
    });

    it('an empty development secret file (its creator died before writing it) is refused, never used as the secret', () => {
      const dir = tmp();
      writeFileSync(join(dir, 'svc-secret'), '');
      expect(() => loadConfig({ SVC_DATA_DIR: dir })).toThrow(/^SVC_DATA_DIR=".*": the development secret file .*svc-secret is empty; remove it and start again$/);
      expect(readFileSync(join(dir, 'svc-secret'), 'utf8')).toBe('');
    });

    it("checks every variable of the README's configuration table, and the table lists every variable checked", () => {
      const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
      const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 5));
      const documented = new Set([...table.matchAll(/^\| (.+?) \|/gm)].flatMap((m) => [...m[1].matchAll(/`([A-Z_]+)`/g)].map((n) => n[1])));
      expect([...documented].sort()).toEqual(Object.keys(VARIABLES).sort());
    });
  });

  it('SVC_TRUST_PROXY: false or the proxies\' addresses; never a setting that lets a client choose its own address', () => {
    const trust = (value: string) => loadConfig({ SVC_SECRET: SECRET, SVC_TRUST_PROXY: value }).trustProxy;
    expect(trust('')).toBe(false);
    expect(trust('false')).toBe(false);
    expect(trust('127.0.0.1')).toEqual(['127.0.0.1']);
    expect(trust(' 10.0.0.0/8, 192.168.1.10 ')).toEqual(['10.0.0.0/8', '192.168.1.10']);
    expect(trust('loopback,uniquelocal')).toEqual(['loopback', 'uniquelocal']);
    expect(trust('::1,fd00::/8')).toEqual(['::1', 'fd00::/8']);
    const allowed = "must be false or a comma-separated list of the proxies' IP addresses or CIDR ranges (or loopback, linklocal, uniquelocal); not true, a hop count or a range of every address (a client could choose its own address)";
    expect(problems({ SVC_TRUST_PROXY: 'true' })).toEqual([`SVC_TRUST_PROXY="true": ${allowed}`]);
    // Refused: a hop count (Fastify no longer honours one), every address, bad addresses and
    // ranges, host names (proxy-addr compares addresses), an empty entry, a shorthand address.
    for (const bad of ['1', '2', '0', '0.0.0.0/0', '::/0', '10.0.0.1/33', '256.1.1.1', 'proxy.internal', '10.0.0.1,', '10.0.0.1,,10.0.0.2', '127.1', 'FALSE', 'on']) {
      expect(problems({ SVC_TRUST_PROXY: bad }), bad).toEqual([`SVC_TRUST_PROXY=${JSON.stringify(bad)}: ${allowed}`]);
    }
  });

  it('parses roles, FX rates and flags', () => {
    const c = loadConfig({ SVC_SECRET: 'x'.repeat(32), SVC_ROLE: 'worker', SVC_FX_RATES: '{"EUR":1.08,"INR":0.012}', SVC_TEST_CLOCK: '1', SVC_ALLOW_PRIVATE_WEBHOOKS: 'off', REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(c).toMatchObject({ role: 'worker', fxRates: { EUR: 1.08, INR: 0.012 }, testClock: true, allowPrivateWebhooks: false, redisUrl: 'redis://127.0.0.1:6379' });
  });
});
