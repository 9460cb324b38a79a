// The shipping rate requests' thread (src/checkout/rate-requests.ts, C15.3): what a checkout's quote
// gets back for each app, and that no failure of the thread ever costs a quote more than its
// timeout and a grace. Real HTTP to a real receiver; a real worker thread.
import { afterEach, describe, expect, it } from 'vitest';
import { RateRequests, RATE_TOPIC, THREAD_GRACE_MS, type RateRequestJob } from '../src/checkout/rate-requests.js';
import { silentLogger } from '../src/platform/logger.js';
import { API_VERSION } from '../src/api-version.js';
import { startReceiver, verifySignature, type Receiver } from './fixtures/webhook-receiver.js';

const STUCK_THREAD = new URL('./helpers/stuck-rate-thread.ts', import.meta.url).href;

let open: (RateRequests | Receiver)[] = [];
afterEach(async () => {
  await Promise.all(open.map((o) => o.close()));
  open = [];
});

function requests(options: ConstructorParameters<typeof RateRequests>[0] = { allowPrivate: true }): RateRequests {
  const r = new RateRequests(options, silentLogger());
  open.push(r);
  return r;
}

async function receiver(answer: Receiver['answer']): Promise<Receiver> {
  const rx = await startReceiver(answer);
  open.push(rx);
  return rx;
}

const job = (url: string, over: Partial<RateRequestJob> = {}): RateRequestJob => ({
  url, secret: 'app-secret', shopDomain: 'shop-one', body: '{"rate":{}}', timeoutMs: 4000, currency: 'USD', ...over,
});

const REPLY = JSON.stringify({
  rates: [
    { service_name: 'Ground', service_code: 'ground', total_price: '899', currency: 'USD', description: '3 to 5 days' },
    { service_name: 'Euro', service_code: 'eu', total_price: 100, currency: 'EUR' },
    { service_name: 'No code', total_price: 100, currency: 'USD' },
    { service_name: 'Express', service_code: 'express', total_price: 1999, currency: 'USD' },
  ],
});

describe('the shipping rate requests thread (C15.3)', () => {
  it('signs each body with its app\'s secret, sends it, and answers with the rates the checkout keeps', async () => {
    const rx = await receiver(() => ({ status: 200, body: REPLY, headers: { 'content-type': 'application/json' } }));
    const r = requests();
    // Asked in one turn: they travel to the thread together, each with its own secret and body.
    const outcomes = await Promise.all([
      r.ask(job(`${rx.url}/a`, { secret: 'secret-a', body: '{"n":1}', shopDomain: 'shop-a' })),
      r.ask(job(`${rx.url}/b`, { secret: 'secret-b', body: '{"n":2}', shopDomain: 'shop-b' })),
      r.ask(job(`${rx.url}/c`, { secret: 'secret-c', body: '{"n":3}', currency: 'EUR' })),
    ]);
    expect(outcomes.map((o) => [o.status, o.error])).toEqual([[200, null], [200, null], [200, null]]);
    expect(outcomes[0].rates!.map((x) => [x.service_code, x.price_minor, x.description])).toEqual([['ground', 899, '3 to 5 days'], ['express', 1999, null]]);
    expect(outcomes[1].rates).toEqual(outcomes[0].rates);
    expect(outcomes[2].rates!.map((x) => x.service_code)).toEqual(['eu']);
    const byPath = new Map(rx.received.map((q) => [q.path, q]));
    for (const [path, secret, body, shop] of [['/a', 'secret-a', '{"n":1}', 'shop-a'], ['/b', 'secret-b', '{"n":2}', 'shop-b']]) {
      const q = byPath.get(path)!;
      expect(q.raw.toString()).toBe(body);
      expect(verifySignature(q.raw, q.headers['x-svc-hmac-sha256'], secret)).toBe(true);
      expect(verifySignature(q.raw, q.headers['x-svc-hmac-sha256'], 'secret-c')).toBe(false);
      expect(q.headers['x-svc-topic']).toBe(RATE_TOPIC);
      expect(q.headers['x-svc-shop-domain']).toBe(shop);
      expect(q.headers['x-svc-api-version']).toBe(API_VERSION);
      expect(q.headers['content-type']).toBe('application/json');
    }
  });

  it('a non-2xx and a malformed 2xx give no rates; a hanging app is a timeout at its deadline', async () => {
    const rx = await receiver((q) => (q.path === '/down' ? { status: 503, body: REPLY } : q.path === '/bad' ? { status: 200, body: '{"rates":{}}' } : 'hang'));
    const r = requests();
    // The thread loads at the first request (over a second on a busy machine): timed from a loaded one.
    await r.ask(job(`${rx.url}/down`));
    const started = performance.now();
    const [down, bad, hang] = await Promise.all([r.ask(job(`${rx.url}/down`)), r.ask(job(`${rx.url}/bad`)), r.ask(job(`${rx.url}/hang`, { timeoutMs: 300 }))]);
    expect([down.status, down.rates]).toEqual([503, null]);
    expect([bad.status, bad.rates]).toEqual([200, null]);
    expect([hang.status, hang.error, hang.rates]).toEqual([null, 'timeout', null]);
    expect(performance.now() - started).toBeLessThan(300 + THREAD_GRACE_MS);
    expect(r.pending).toBe(0);
  });

  it('refuses a private address in the thread while private addresses are not allowed (C8.9), sending nothing', async () => {
    const rx = await receiver(() => ({ status: 200, body: REPLY }));
    const outcome = await requests({ allowPrivate: false }).ask(job(`${rx.url}/rates`));
    expect([outcome.status, outcome.error, outcome.rates]).toEqual([null, 'blocked_address', null]);
    expect(rx.received).toHaveLength(0);
  });

  it('a thread that stops answering costs each request its timeout and a grace, never more', async () => {
    const rx = await receiver(() => ({ status: 200, body: REPLY }));
    const r = requests({ allowPrivate: true, preload: [STUCK_THREAD] });
    const started = performance.now();
    const outcome = await r.ask(job(`${rx.url}/rates`, { timeoutMs: 200 }));
    const took = performance.now() - started;
    expect([outcome.status, outcome.error, outcome.rates]).toEqual([null, 'timeout', null]);
    // Given up at the first backstop check past deadline + grace (checks every THREAD_GRACE_MS).
    expect(took).toBeGreaterThanOrEqual(200 + THREAD_GRACE_MS - 5);
    expect(took).toBeLessThan(200 + 2 * THREAD_GRACE_MS + 500);
    expect(r.pending).toBe(0);
  });

  it('a thread that dies fails the requests in flight at once, and the next request starts a new one', async () => {
    const rx = await receiver((q) => (q.path === '/hang' ? 'hang' : { status: 200, body: REPLY }));
    const r = requests();
    const inFlight = r.ask(job(`${rx.url}/hang`));
    await expect.poll(() => rx.received.length, { timeout: 20_000 }).toBe(1); // the thread loads first (slow on a busy machine)
    const started = performance.now();
    await (r as unknown as { thread: { terminate(): Promise<number> } }).thread.terminate();
    const lost = await inFlight;
    expect([lost.status, lost.error, lost.rates]).toEqual([null, 'network_error: rate thread stopped', null]);
    expect(performance.now() - started).toBeLessThan(1000);
    const next = await r.ask(job(`${rx.url}/rates`));
    expect([next.status, next.rates?.length]).toEqual([200, 2]);
  });

  it('close answers the requests in flight and every later one at once, and ends the thread', async () => {
    const rx = await receiver(() => 'hang');
    const r = requests();
    const inFlight = r.ask(job(`${rx.url}/hang`));
    await expect.poll(() => rx.received.length, { timeout: 20_000 }).toBe(1); // the thread loads first (slow on a busy machine)
    await r.close();
    expect((await inFlight).error).toBe('network_error: shutting down');
    expect((await r.ask(job(`${rx.url}/hang`))).error).toBe('network_error: shutting down');
    expect(rx.received).toHaveLength(1);
    expect(r.pending).toBe(0);
  });
});
