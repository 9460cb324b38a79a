// Throttling of failed logins (issue 10 item 16; C2.2; docs/decisions.md "Hardening"): per account
// and per client address, 429 envelope with Retry-After, checked before the password, blind to
// whether the email exists, on the service clock. Run on the memory store (one service) and, when
// REDIS_URL is set, on Redis with two services sharing it: requests alternate between them, so
// every count below is only right if the two share it.
//
// Each test uses its own emails and client addresses (random, in 10/8), so tests do not lock each
// other out, and neither do repeated runs against one Redis.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, listenOnLoopback, type Harness } from './helpers/harness.js';
import { LOGIN_LIMITS, THROTTLED_MESSAGE } from '../src/accounts/login-throttle.js';
import type { AttemptStore } from '../src/ratelimit/attempts.js';

const REDIS_URL = process.env.REDIS_URL;
const PASSWORD = 'correct-horse';
const WINDOW_S = LOGIN_LIMITS.account.windowMs / 1000;
const ACCOUNT_LIMIT = LOGIN_LIMITS.account.limit;
const CLIENT_LIMIT = LOGIN_LIMITS.client.limit;

const uniq = () => randomBytes(5).toString('hex');
const newEmail = () => `t-${uniq()}@example.com`;
const newIp = () => `10.${[...randomBytes(3)].join('.')}`;

const ENVELOPE_429 = { status: 429, state: 'error', message: THROTTLED_MESSAGE, data: null, count: null, pagination: null };

const stores = [
  { name: 'memory store, one service', redis: false },
  ...(REDIS_URL ? [{ name: 'Redis store, two services sharing it', redis: true }] : []),
];

describe.each(stores)('$name', ({ redis }) => {
  let services: Harness[];
  let turn = 0;
  beforeAll(async () => {
    const env: Record<string, string> = redis ? { REDIS_URL: REDIS_URL! } : {};
    services = redis ? [await createHarness(env), await createHarness(env)] : [await createHarness(env)];
  });
  afterAll(async () => {
    for (const s of services ?? []) await s.close();
  });

  /** The next service in turn (alternating when there are two). */
  const next = () => services[turn++ % services.length];

  async function login(email: string, password: string, ip: string) {
    const res = await next().app.inject({ method: 'POST', url: '/auth/login', remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email, password }) });
    return { status: res.statusCode, body: res.json(), retryAfter: res.headers['retry-after'] as string | undefined };
  }

  /** A user known to every service (on PGlite each has its own database; on PostgreSQL they share one). */
  async function user(): Promise<string> {
    const email = newEmail();
    for (const s of services) {
      const res = await s.req('POST', '/auth/signup', { body: { email, password: PASSWORD, name: 'T', role: 'PARTNER' } });
      expect([201, 409]).toContain(res.statusCode);
    }
    return email;
  }

  const advance = async (seconds: number) => {
    for (const s of services) await s.advance(seconds);
  };

  function expectThrottled(r: Awaited<ReturnType<typeof login>>, atMost = WINDOW_S) {
    expect(r.status).toBe(429);
    expect(r.body).toEqual(ENVELOPE_429);
    const seconds = Number(r.retryAfter);
    expect(Number.isInteger(seconds)).toBe(true);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(atMost);
    return seconds;
  }

  it('30 wrong passwords: 401 for the first five, then 429 envelope with Retry-After; the right password is refused too', async () => {
    const email = await user();
    const ip = newIp();
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await login(email, `wrong-${i}-password`, ip);
      statuses.push(r.status);
      if (r.status === 401) expect(r.retryAfter).toBeUndefined();
      else expectThrottled(r);
    }
    expect(statuses).toEqual([...Array(ACCOUNT_LIMIT).fill(401), ...Array(30 - ACCOUNT_LIMIT).fill(429)]);
    // Locked: the right password gets the same 429, from any address, so the lock cannot be probed.
    expectThrottled(await login(email, PASSWORD, ip));
    expectThrottled(await login(email.toUpperCase(), PASSWORD, newIp()));
  });

  it('the lock lasts 15 minutes on the service clock; then the right password logs in and the failures start again from zero', async () => {
    const email = await user();
    const ip = newIp();
    for (let i = 0; i < ACCOUNT_LIMIT; i++) expect((await login(email, 'wrong-password', ip)).status).toBe(401);
    const retry = expectThrottled(await login(email, PASSWORD, ip));
    expect(retry).toBeGreaterThan(WINDOW_S - 60);

    await advance(WINDOW_S - 120);
    const later = expectThrottled(await login(email, PASSWORD, ip));
    expect(later).toBeLessThanOrEqual(120);
    await advance(121);
    const ok = await login(email, PASSWORD, ip);
    expect(ok.status).toBe(200);
    expect(ok.body.data.user.email).toBe(email);
    // A new window: four failures are still 401s.
    for (let i = 0; i < ACCOUNT_LIMIT - 1; i++) expect((await login(email, 'wrong-password', ip)).status).toBe(401);
  });

  it('a success clears the account\'s failures', async () => {
    const email = await user();
    const ip = newIp();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < ACCOUNT_LIMIT - 1; i++) expect((await login(email, 'wrong-password', ip)).status).toBe(401);
      expect((await login(email, PASSWORD, ip)).status).toBe(200);
    }
  });

  it('an email that does not exist is counted and locked exactly like one that does', async () => {
    const known = await user();
    const unknown = newEmail();
    const seq = async (email: string) => {
      const ip = newIp();
      const out: unknown[] = [];
      for (let i = 0; i < ACCOUNT_LIMIT + 2; i++) {
        const r = await login(email, 'wrong-password', ip);
        out.push([r.status, r.body, r.retryAfter === undefined ? null : 'Retry-After']);
      }
      return out;
    };
    expect(await seq(unknown)).toEqual(await seq(known));
  });

  it('per client address: 30 failures across many emails lock the address, for every email; other addresses are not affected', async () => {
    const ip = newIp();
    const statuses: number[] = [];
    for (let i = 0; i < CLIENT_LIMIT + 3; i++) statuses.push((await login(newEmail(), 'wrong-password', ip)).status);
    expect(statuses).toEqual([...Array(CLIENT_LIMIT).fill(401), 429, 429, 429]);
    const email = await user();
    expectThrottled(await login(email, PASSWORD, ip));
    // The account itself is not locked: from another address it logs in.
    expect((await login(email, PASSWORD, newIp())).status).toBe(200);
  }, 60_000);

  it('an IPv6 client is counted by its /64: addresses in one /64 share the counter, other /64s do not; IPv4-mapped is the IPv4 address', async () => {
    // A random /64 in 2001:db8::/32; each failure from another address in it, written in other forms.
    const word = () => randomBytes(2).readUInt16BE(0);
    const [a, b] = [word(), word()];
    const prefix = `2001:db8:${a.toString(16)}:${b.toString(16)}`;
    const inBlock = (i: number) => (i % 2 ? `${prefix}:${(i + 1).toString(16)}::${word().toString(16)}` : `${prefix.toUpperCase()}:0:0:${word().toString(16)}:${i.toString(16)}`);
    const statuses: number[] = [];
    for (let i = 0; i < CLIENT_LIMIT + 1; i++) statuses.push((await login(newEmail(), 'wrong-password', inBlock(i))).status);
    expect(statuses).toEqual([...Array(CLIENT_LIMIT).fill(401), 429]);
    const email = await user();
    expectThrottled(await login(email, PASSWORD, `${prefix}::1`));
    // The neighbouring /64 is another client.
    const neighbour = `2001:db8:${a.toString(16)}:${(b ^ 1).toString(16)}::1`;
    expect((await login(email, PASSWORD, neighbour)).status).toBe(200);

    // IPv4: unchanged, and the same address seen through a dual-stack socket is the same client.
    const ip = newIp();
    const mapped: number[] = [];
    for (let i = 0; i < CLIENT_LIMIT + 1; i++) mapped.push((await login(newEmail(), 'wrong-password', i % 2 ? `::ffff:${ip}` : ip)).status);
    expect(mapped).toEqual([...Array(CLIENT_LIMIT).fill(401), 429]);
    expectThrottled(await login(email, PASSWORD, ip));
    // The next IPv4 address is not in the lock: IPv4 is counted per address, not per block.
    const [o1, o2, o3, o4] = ip.split('.').map(Number);
    expect((await login(email, PASSWORD, `${o1}.${o2}.${o3}.${o4 ^ 1}`)).status).toBe(200);
  }, 60_000);

  it('successes do not count against the address', async () => {
    const email = await user();
    const ip = newIp();
    for (let i = 0; i < CLIENT_LIMIT + 5; i++) expect((await login(email, PASSWORD, ip)).status).toBe(200);
  }, 60_000);

  it('concurrent wrong passwords cannot slip past the limit', async () => {
    const email = await user();
    const ip = newIp();
    const results = await Promise.all(Array.from({ length: 20 }, () => login(email, 'wrong-password', ip)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(ACCOUNT_LIMIT).fill(401), ...Array(20 - ACCOUNT_LIMIT).fill(429)]);
  });

  it('a malformed login (400) is not counted', async () => {
    const email = await user();
    const ip = newIp();
    for (let i = 0; i < ACCOUNT_LIMIT + 2; i++) {
      const res = await next().app.inject({ method: 'POST', url: '/auth/login', remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email, password: '' }) });
      expect(res.statusCode).toBe(400);
    }
    expect((await login(email, PASSWORD, ip)).status).toBe(200);
  });
});

describe('when the attempt store is unreachable', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h?.close());

  it('logins are let through unthrottled rather than refused', async () => {
    const email = `t-${uniq()}@example.com`;
    expect((await h.req('POST', '/auth/signup', { body: { email, password: PASSWORD, name: 'T', role: 'PARTNER' } })).statusCode).toBe(201);
    const down = () => Promise.reject(new Error('connection refused'));
    const broken: AttemptStore = { take: down, reset: down, refund: down, close: async () => {} };
    const real = h.deps.attempts;
    h.deps.attempts = broken;
    try {
      for (let i = 0; i < ACCOUNT_LIMIT + 2; i++) expect((await h.req('POST', '/auth/login', { body: { email, password: 'wrong-password' } })).statusCode).toBe(401);
      expect((await h.req('POST', '/auth/login', { body: { email, password: PASSWORD } })).statusCode).toBe(200);
    } finally {
      h.deps.attempts = real;
    }
  });
});

// Behind a load balancer every client reaches the service from the proxy's address (README "Running
// at scale"; docs/decisions.md "Hardening: SSRF and login throttling"). Over real HTTP on loopback:
// the socket's address is always 127.0.0.1, standing for the proxy, and X-Forwarded-For names the
// client. Memory store, one service per block: the loopback address is counted afresh.
describe.each<{ name: string; env: Record<string, string>; trusted: boolean }>([
  { name: 'SVC_TRUST_PROXY=127.0.0.1 (the proxy on loopback)', env: { SVC_TRUST_PROXY: '127.0.0.1' }, trusted: true },
  { name: 'SVC_TRUST_PROXY unset (the default)', env: {}, trusted: false },
])('client addresses behind a proxy: $name', ({ env, trusted }) => {
  let h: Harness;
  let base: string;
  beforeAll(async () => {
    h = await createHarness(env);
    base = await listenOnLoopback(h);
  });
  afterAll(() => h?.close());

  async function fail(forwardedFor: string): Promise<number> {
    const res = await fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      body: JSON.stringify({ email: newEmail(), password: 'wrong-password' }),
    });
    await res.arrayBuffer();
    return res.status;
  }

  it.runIf(trusted)('two clients told apart only by X-Forwarded-For are throttled separately: one locked, the other not', async () => {
    const [locked, other] = [newIp(), newIp()];
    const statuses: number[] = [];
    for (let i = 0; i < CLIENT_LIMIT + 1; i++) statuses.push(await fail(locked));
    expect(statuses).toEqual([...Array(CLIENT_LIMIT).fill(401), 429]);
    expect(await fail(other)).toBe(401);
    // The proxy appends the address it saw: what a client writes in front of it is not believed.
    expect(await fail(`${other}, ${locked}`)).toBe(429);
    expect(await fail(`${locked}, ${other}`)).toBe(401);
  }, 60_000);

  it.runIf(trusted)('a peer that is not a trusted proxy is its socket address, whatever X-Forwarded-For it sends', async () => {
    const peer = newIp();
    const statuses: number[] = [];
    for (let i = 0; i < CLIENT_LIMIT + 1; i++) {
      const res = await h.app.inject({ method: 'POST', url: '/auth/login', remoteAddress: peer, headers: { 'content-type': 'application/json', 'x-forwarded-for': newIp() }, payload: JSON.stringify({ email: newEmail(), password: 'wrong-password' }) });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([...Array(CLIENT_LIMIT).fill(401), 429]);
  }, 60_000);

  it.runIf(!trusted)('X-Forwarded-For is ignored: one socket address is one client however the header varies', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < CLIENT_LIMIT + 2; i++) statuses.push(await fail(newIp()));
    expect(statuses).toEqual([...Array(CLIENT_LIMIT).fill(401), 429, 429]);
  }, 60_000);
});
