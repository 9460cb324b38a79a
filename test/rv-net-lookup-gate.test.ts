// Outbound name lookups and libuv's threadpool (C8.9, C15.3; docs/decisions.md "Hardening: SSRF and
// login throttling"). `dns.lookup` is getaddrinfo on one of libuv's 4 pool threads, with no timeout
// of its own: a name whose nameserver never answers holds its thread for as long as the system
// resolver retries. Before the gate, a handful of such names (an attacker's subdomains as webhook
// or ratesUrl hosts) held every pool thread, and everything else that needs the pool stalled with
// them: scrypt at login, file reads, every other delivery's and checkout's lookups.
//
// Names under `hang.test`, `hang-x.test` (any domain `hang*.test`) model such a nameserver with a real
// pool thread: the fake lookup opens a FIFO nobody writes to, which blocks a pool thread in open(2)
// exactly as getaddrinfo blocks one in recvfrom, until the test releases it. `.rebind.test` names
// answer as in test/helpers/rebind-dns.ts.
import { closeSync, constants, openSync, promises as fsp, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { scrypt } from 'node:crypto';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { signupMerchant } from './helpers/actors.js';
import {
  checkTargetUrl, guardedLookup, guardedLookupWithin, LOOKUP_CONCURRENCY, lookupOwner, outboundLookups, SAVE_LOOKUP_TIMEOUT_MS,
} from '../src/net/address-safety.js';
import { WebhookHttp } from '../src/webhooks/http-client.js';
import { verdictOf } from '../src/webhooks/retry-policy.js';

const hang = vi.hoisted(() => ({ fifo: '', started: 0, released: false }));

vi.mock('node:dns', async (original) => {
  const dns: any = (await import('./helpers/rebind-dns.js')).rebindDns(await original());
  const fs = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { execFileSync } = await import('node:child_process');
  hang.fifo = join(fs.mkdtempSync(join(tmpdir(), 'rv-net-')), 'nameserver');
  execFileSync('mkfifo', [hang.fifo]);
  const lookup = (host: string, options: any, callback: any) => {
    if (!/\.hang[a-z0-9-]*\.test\.?$/i.test(host)) return dns.lookup(host, options, callback);
    hang.started++;
    // Once released, the nameserver answers at once.
    if (hang.released) return process.nextTick(() => callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host })));
    // Blocks a pool thread until a writer opens the FIFO; then the name "does not exist".
    fs.open(hang.fifo, 'r', (err, fd) => {
      if (!err) fs.close(fd, () => {});
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host }));
    });
  };
  const promises = {
    ...dns.promises,
    lookup: (host: string, options: any) =>
      new Promise((resolve, reject) => lookup(host, options, (err: any, address: any, family: any) => (err ? reject(err) : resolve(options?.all ? address : { address, family })))),
  };
  return { ...dns, default: { ...dns.default, lookup, promises }, lookup, promises };
});
vi.mock('node:dns/promises', async (original) => {
  const actual: any = await original();
  const dns = await import('node:dns');
  return { ...actual, default: { ...actual, lookup: dns.promises.lookup }, lookup: dns.promises.lookup };
});

/** Lets every hung lookup's open(2) return (a writer opens the FIFO and goes); later ones answer at once. */
function releaseHungLookups(): void {
  hang.released = true;
  openFifoOnce();
}

/** Lets the lookups hung now return (the resolver gave up after its retries); later ones hang again. */
async function endHungLookups(): Promise<void> {
  for (let i = 0; i < 100 && outboundLookups().active > 0; i++) {
    openFifoOnce();
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(outboundLookups().active).toBe(0);
}

function openFifoOnce(): void {
  try {
    closeSync(openSync(hang.fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err; // no reader waiting
  }
}

/** `promise`, or a rejection after `ms` (so a stalled pool fails the test instead of hanging it). */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no result in ${ms} ms`)), ms))),
  ]);
}

const guarded = (lookup: typeof guardedLookup, host: string) =>
  new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) => lookup(host, {}, (err, address) => resolve({ err, address })));

const PASSWORD = 'correct-horse';
let strict: Harness;
beforeAll(async () => {
  strict = await createWebhookHarness({ SVC_ALLOW_PRIVATE_WEBHOOKS: '0' });
});
afterAll(async () => {
  for (let i = 0; i < 20 && outboundLookups().active > 0; i++) {
    releaseHungLookups();
    await new Promise((r) => setTimeout(r, 50));
  }
  await strict?.close();
  if (hang.fifo) rmSync(dirname(hang.fifo), { recursive: true, force: true });
});

const innocentWithin = (ms: number, host: string) => within(ms, `lookup of ${host}`, guarded(guardedLookupWithin(2000), host));
const askedAtLeast = (n: number) => within(2000, `${n} lookups asked`, (async () => {
  while (outboundLookups().active + outboundLookups().waiting < n) await new Promise((r) => setTimeout(r, 10));
})());

describe('C8.9 outbound lookups: an owner of names holds at most one place, and one timing out is answered at once', () => {
  it('the owner of a name is the domain it is registered under, as far as can be told without a public-suffix list', () => {
    expect(lookupOwner('a.b.evil.com')).toBe('evil.com');
    expect(lookupOwner('Hook.X1.Hang-One.TEST.')).toBe('hang-one.test');
    expect(lookupOwner('x.y.evil.co.uk')).toBe('evil.co.uk');
    expect(lookupOwner('shop.store.com.au')).toBe('store.com.au');
    expect(lookupOwner('hooks.example.de')).toBe('example.de');
    expect(lookupOwner('evil.io')).toBe('evil.io');
    expect(lookupOwner('intranet')).toBe('intranet');
  });

  it('ten hanging names of one attacker domain (subdomains at any depth) hold one place and one thread: an innocent name answers at once; at the deadline its names fail, and later ones at once', async () => {
    const merchant = await signupMerchant(strict);
    const before = hang.started;
    const t0 = Date.now();
    // A shipping app's or a developer's webhook hosts, all under one domain whose nameserver never answers.
    const hooks = Array.from({ length: 10 }, (_, i) => guarded(guardedLookupWithin(3000), `hook-${i}.x${i % 3}.hang-one.test`).then((r) => ({ ...r, ms: Date.now() - t0 })));
    // A store's webhook subscription to the same domain (save-time check, 5 s deadline).
    const route = strict.req('POST', '/webhooks', { token: merchant.token, body: { topic: 'orders/create', address: 'https://route.y.hang-one.test/hook' } })
      .then((res) => ({ res, ms: Date.now() - t0 }));
    await askedAtLeast(11);

    // Another app's host answers at once: it waited behind ten lookups of a domain that has one in
    // getaddrinfo, and went first (before the change: both places held, it waited its 2 s and failed).
    expect(await innocentWithin(1000, '1-1-1-1.v4.rebind.test')).toEqual({ err: null, address: '1.1.1.1' });
    expect(outboundLookups()).toEqual({ active: 1, waiting: 10 });
    expect(hang.started - before).toBe(1);

    // At the deadline: ETIMEOUT for all (a delivery's network error, retried) ...
    for (const h of await Promise.all(hooks)) {
      expect(h.err?.code).toBe('ETIMEOUT');
      expect(h.ms).toBeGreaterThanOrEqual(2900);
      expect(h.ms).toBeLessThan(4500);
    }
    // ... and the subscription waiting with a longer deadline is refused at once, in the route's shape.
    const { res, ms } = await route;
    expect([res.statusCode, res.json().message]).toEqual([422, 'address host does not resolve']);
    expect(ms).toBeLessThan(SAVE_LOOKUP_TIMEOUT_MS - 1000);

    // The domain is timing out: its names, fresh ones included, fail at once and take no place.
    const t1 = Date.now();
    const again = await Promise.all(Array.from({ length: 5 }, (_, i) => guarded(guardedLookupWithin(3000), `again-${i}.z.hang-one.test`)));
    expect(again.map((a) => a.err?.code)).toEqual(Array(5).fill('ETIMEOUT'));
    expect(Date.now() - t1).toBeLessThan(1000);
    // A delivery records `network_error: ETIMEOUT` and is retried; a rate request gives no rates, at once.
    const delivery = await within(1000, 'delivery', new WebhookHttp(false).send('https://hooks.hang-one.test/hook', { 'content-type': 'application/json' }, '{}'));
    expect(delivery).toMatchObject({ status: null, error: 'network_error: ETIMEOUT' });
    expect(verdictOf(delivery)).toBe('retry');
    const rate = await within(1000, 'rate request', new WebhookHttp(false, 5000).send('https://rates.hang-one.test/rates', { 'content-type': 'application/json' }, '{}'));
    expect(rate).toMatchObject({ status: null, error: 'network_error: ETIMEOUT' });
    expect(outboundLookups()).toEqual({ active: 1, waiting: 0 });
    expect(hang.started - before).toBe(1);

    // Its getaddrinfo returns (the resolver gave up): the domain is still answered at once for a while.
    await endHungLookups();
    expect((await guarded(guardedLookupWithin(3000), 'later.hang-one.test')).err?.code).toBe('ETIMEOUT');
    expect(hang.started - before).toBe(1);
    expect(outboundLookups()).toEqual({ active: 0, waiting: 0 });
  }, 20_000);

  it('two attacker domains: their first lookups hold the two places until they return, then their names (every retry, every checkout) take no place again; an innocent name answers at once', async () => {
    const before = hang.started;
    const first = [guarded(guardedLookupWithin(500), 'a.hang-two-a.test'), guarded(guardedLookupWithin(500), 'b.hang-two-b.test')];
    await askedAtLeast(2);
    expect(outboundLookups()).toEqual({ active: 2, waiting: 0 });
    expect((await Promise.all(first)).map((r) => r.err?.code)).toEqual(['ETIMEOUT', 'ETIMEOUT']);

    // While their threads are still held, more of their names (fresh subdomains) are answered at once.
    const names = (tag: string) => Array.from({ length: 10 }, (_, i) => [`${tag}-${i}.hang-two-a.test`, `${tag}-${i}.q.hang-two-b.test`]).flat();
    let t = Date.now();
    const more = await Promise.all(names('more').map((n) => guarded(guardedLookupWithin(2000), n)));
    expect(more.map((r) => r.err?.code)).toEqual(Array(20).fill('ETIMEOUT'));
    expect(Date.now() - t).toBeLessThan(1000);
    expect(outboundLookups()).toEqual({ active: 2, waiting: 0 });
    expect(hang.started - before).toBe(2);

    // The system resolver gives up on the two and they return. The attacker's names are asked again:
    // no place is taken, and another app's host answers at once (before the change: the two places
    // were held again, and it waited its 2 s and failed).
    await endHungLookups();
    t = Date.now();
    const again = Promise.all([...names('again'), 'a.hang-two-a.test', 'b.hang-two-b.test'].map((n) => guarded(guardedLookupWithin(2000), n)));
    expect(await innocentWithin(1000, '1-1-1-3.v4.rebind.test')).toEqual({ err: null, address: '1.1.1.3' });
    expect((await again).map((r) => r.err?.code)).toEqual(Array(22).fill('ETIMEOUT'));
    expect(Date.now() - t).toBeLessThan(1000);
    expect(hang.started - before).toBe(2);
    expect(outboundLookups()).toEqual({ active: 0, waiting: 0 });
  }, 20_000);
});

describe('C8.9 outbound lookups: names that never answer hold at most LOOKUP_CONCURRENCY pool threads', () => {
  it('while 20 lookups hang, a login (scrypt), a file read and a rate request\'s 500 ms deadline still hold; the hung lookups fail at their deadline', async () => {
    expect(LOOKUP_CONCURRENCY).toBe(2);
    const merchant = await signupMerchant(strict);
    const started = Date.now();
    const before = hang.started;

    // Save-time checks (deadline SAVE_LOOKUP_TIMEOUT_MS, waiting included), one through the route,
    // and send-time socket lookups with a deadline of 2 s, each of its own attacker domain (one
    // domain holds at most one place, see above).
    const saves = Array.from({ length: 9 }, (_, i) => checkTargetUrl(`https://save-${i}.hang-save-${i}.test/hook`, false).then((r) => ({ r, ms: Date.now() - started })));
    const route = strict.req('POST', '/webhooks', { token: merchant.token, body: { topic: 'orders/create', address: 'https://route.hang-route.test/hook' } })
      .then((res) => ({ res, ms: Date.now() - started }));
    const sends = Array.from({ length: 10 }, (_, i) => guarded(guardedLookupWithin(2000), `send-${i}.hang-send-${i}.test`).then((r) => ({ ...r, ms: Date.now() - started })));

    await within(2000, 'all 20 lookups asked', (async () => {
      while (outboundLookups().active + outboundLookups().waiting < 20) await new Promise((r) => setTimeout(r, 10));
    })());
    // Only two ever reached the resolver; the others wait for the gate, not for a pool thread.
    expect(hang.started - before).toBe(LOOKUP_CONCURRENCY);
    expect(outboundLookups()).toEqual({ active: 2, waiting: 18 });

    // (1) The rest of the process is not stalled: a login's password check (scrypt on the pool),
    // a file read, a bare scrypt, each well within a second.
    const login = await within(3000, 'login', strict.req('POST', '/auth/login', { body: { email: merchant.email, password: PASSWORD } }));
    expect(login.statusCode).toBe(200);
    await within(1000, 'file read', fsp.readFile(new URL(import.meta.url)));
    await within(1000, 'scrypt', new Promise((resolve, reject) => scrypt('pw', 'salt', 32, (err, key) => (err ? reject(err) : resolve(key)))));
    // A shipping rate request to a hung name costs its own deadline (C15.3) and no more, and a
    // webhook attempt that fails so is retried.
    const rate = await within(2000, 'rate request', new WebhookHttp(false, 500).send('https://rates.hang-rates.test/rates', { 'content-type': 'application/json' }, '{}'));
    expect(rate).toMatchObject({ status: null, error: 'timeout' });
    expect(rate.durationMs).toBeLessThan(1500);
    expect(verdictOf(rate)).toBe('retry');
    // A socket whose lookup has a deadline shorter than its client's gets the lookup's failure as
    // the connection's error: ETIMEOUT, recorded as `network_error: ETIMEOUT` and retried.
    const agent = new Agent({ connect: { timeout: 5000, lookup: guardedLookupWithin(400) } });
    const failed = await within(2000, 'socket lookup', request('https://socket.hang-socket.test/hook', { dispatcher: agent, method: 'POST', body: '{}' }).then(() => null, (err) => err));
    await agent.close();
    expect(failed?.cause?.code ?? failed?.code).toBe('ETIMEOUT'); // as http-client's describeNetworkError reads it
    expect(verdictOf({ status: null, error: `network_error: ETIMEOUT` })).toBe('retry');

    // (2) The hung lookups fail at their deadline, waiting included: send-time ones with ETIMEOUT
    // (a network error: the delivery is retried, the rate request gives no rates) ...
    for (const s of await Promise.all(sends)) {
      expect(s.err?.code).toBe('ETIMEOUT');
      expect(s.ms).toBeGreaterThanOrEqual(1900);
      expect(s.ms).toBeLessThan(4000);
    }
    // ... save-time ones as "host does not resolve", in the route's documented shape.
    for (const { r, ms } of await Promise.all(saves)) {
      expect(r).toEqual({ ok: false, reason: 'host does not resolve' });
      expect(ms).toBeGreaterThanOrEqual(SAVE_LOOKUP_TIMEOUT_MS - 100);
      expect(ms).toBeLessThan(SAVE_LOOKUP_TIMEOUT_MS + 3000);
    }
    const { res } = await route;
    expect([res.statusCode, res.json()]).toEqual([422, { status: 422, state: 'error', message: 'address host does not resolve', data: null, count: null, pagination: null }]);

    // The two getaddrinfo calls that timed out still hold their threads, and the gate still counts
    // them: nothing waiting was let in behind them. (The rate request's socket lookup may still
    // wait: its socket is gone, but a socket's lookup only has guardedLookup's own deadline.)
    expect(outboundLookups().active).toBe(2);
    expect(outboundLookups().waiting).toBeLessThanOrEqual(1);
    expect(hang.started - before).toBe(LOOKUP_CONCURRENCY);

    // (3) Once they return, the gate is free and lookups work as before.
    releaseHungLookups();
    await within(2000, 'the hung lookups return', (async () => {
      while (outboundLookups().active + outboundLookups().waiting > 0) await new Promise((r) => setTimeout(r, 10));
    })());
    expect(await checkTargetUrl('https://1-1-1-1.v4.rebind.test/hook', false)).toMatchObject({ ok: true });
    expect(await checkTargetUrl('https://127-0-0-1.v4.rebind.test/hook', false)).toEqual({ ok: false, reason: 'points at a private address' });
    expect(await guarded(guardedLookup, '1-1-1-1.v4.rebind.test')).toEqual({ err: null, address: '1.1.1.1' });
    expect((await guarded(guardedLookup, '10-0-0-1.v4.rebind.test')).err?.code).toBe('BLOCKED_ADDRESS');
    const ok = await strict.req('POST', '/webhooks', { token: merchant.token, body: { topic: 'orders/create', address: 'https://1-1-1-1.v4.rebind.test/hook' } });
    expect(ok.statusCode).toBe(201);
    expect(outboundLookups()).toEqual({ active: 0, waiting: 0 });
  }, 30_000);

  it('lookups under the limit are not held back, and a burst of quick ones all answer', async () => {
    const names = Array.from({ length: 50 }, (_, i) => `1-1-1-${i + 1}.v4.rebind.test`);
    const answers = await within(2000, 'burst', Promise.all(names.map((n) => guarded(guardedLookup, n))));
    expect(answers.map((a) => a.address)).toEqual(names.map((_, i) => `1.1.1.${i + 1}`));
    expect(outboundLookups()).toEqual({ active: 0, waiting: 0 });
  });

  it('callers asking for one name at once share one getaddrinfo; each gets the answer (or error) and a later caller a fresh one', async () => {
    const before = hang.started; // hang names answer ENOTFOUND at once since the first test released them
    const same = await Promise.all(Array.from({ length: 20 }, () => guarded(guardedLookup, 'same.hang.test')));
    expect(same.map((r) => r.err?.code)).toEqual(Array(20).fill('ENOTFOUND'));
    expect(hang.started - before).toBe(1);
    await guarded(guardedLookup, 'same.hang.test');
    expect(hang.started - before).toBe(2);
    // A socket's own options (here an IPv6-only socket) still reach the lookup, and the checks hold.
    const answers = await Promise.all([
      new Promise((resolve) => guardedLookup('0-0-0-0-0-0-0-1.v6.rebind.test', { family: 6 }, (err) => resolve(err?.code))),
      guarded(guardedLookup, '1-1-1-1.v4.rebind.test'),
      checkTargetUrl('https://1-1-1-1.v4.rebind.test/', false),
    ]);
    expect(answers).toEqual(['BLOCKED_ADDRESS', { err: null, address: '1.1.1.1' }, { ok: true, url: new URL('https://1-1-1-1.v4.rebind.test/') }]);
    expect(outboundLookups()).toEqual({ active: 0, waiting: 0 });
  });
});
