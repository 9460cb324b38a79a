// Receiving what the platform sends (packages/app-sdk adapters, webhooks; C8.3, C15.3) and what a
// shipping app answers (examples/shipping-app), as an app developer meets them. Bugs found by an
// adversarial review (issue 14):
// - A sender that disconnects mid-body made `receiveNodeRequest` reject; in an `async` node:http
//   handler written as the README shows (no try/catch) the rejection ended the app's process: one
//   cut-off request took `packages/app-sdk/examples/node-http.ts` down. A request whose body a
//   parser had already read (`express.json()`) left it waiting for ever.
// - A header bag given as a plain object was read case-sensitively (`X-SVC-Hmac-SHA256` as saved,
//   or from a serverless event, was "missing") and a repeated signature header (an array) was read
//   as its first copy, so a request carrying a second, different signature verified.
// - The example app priced in `Intl`'s minor units; the platform reads ISO 4217's. For HUF, IDR,
//   COP, PKR, IQD (...) the buyer was offered a hundredth (a thousandth) of the app's price.
// - svc-app kept the last of an option given twice; a saved request's two spellings of the
//   signature header let the last one win.
// - createAppClient read a fractional Retry-After ("90.5") as a date in 2001: no wait at all; and
//   it waited for X-RateLimit-Reset on its own clock, so a clock behind the platform's stalled it.
// - With an empty secret (an unset CLIENT_SECRET read as ""), verifyMessage and verifyHandoff
//   accepted anything signed with the empty key: a forged shop/redact or install handoff.
// - runFixtures reported a fixture file that is not JSON with a bare JSON.parse message.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { connect } from 'node:net';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { createHmac } from 'node:crypto';
import { data as isoCurrencies } from 'currency-codes';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, ROOT } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { main } from '../packages/app-sdk/src/cli.js';
import { signBody as platformSign } from '../src/webhooks/deliveries.repo.js';
import { minorDigits as platformDigits, isoCurrency } from '../src/currencies.js';
import { parseRateReply } from '../src/checkout/rate-reply.js';
import {
  BodyAlreadyReadError, createAppClient, currencyDigits, parseWebhook, runFixtures, readNodeRequest, receiveNodeRequest, receiveWebRequest, refusalStatus, toMinorUnits,
  signBody, verifyBodySignature, verifyHandoff, verifyMessage, verifySessionToken, type RateRequest,
} from '../packages/app-sdk/src/index.js';

const run = promisify(execFile);

/** The example app's `quote` for each request, run as the app runs (its SDK import resolved by `svc-source`). */
async function exampleQuotes(requests: RateRequest[]): Promise<unknown[][]> {
  const script = `import { quote } from './examples/shipping-app/src/rates.ts';
    const requests = JSON.parse(process.env.REQUESTS);
    process.stdout.write(JSON.stringify(requests.map((r) => quote(r))));`;
  const { stdout } = await run(process.execPath, ['--conditions=svc-source', '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT, env: { ...process.env, REQUESTS: JSON.stringify(requests) }, maxBuffer: 16 << 20,
  });
  return JSON.parse(stdout) as unknown[][];
}

const SECRET = 'svcsk_receiving-test-secret';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A node:http server whose handler is `handle`; resolves with its port. */
async function serve(handle: (req: IncomingMessage) => Promise<unknown>, onOutcome: (outcome: unknown) => void): Promise<number> {
  const server = createServer((req, res) => {
    handle(req).then((v) => { onOutcome(v); res.end(); }, (err) => { onOutcome(err); res.end(); });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Sends the headers and the start of a body announced longer, then disconnects. */
function sendCutShort(port: number, path = '/'): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-SVC-Topic: orders/create\r\nContent-Length: 100\r\n\r\n{"id":`, () => {
        socket.destroy();
        resolve();
      });
    });
    socket.on('error', reject);
  });
}

describe('a body the sender cuts short, or one already read (the receive functions)', () => {
  it('receiveNodeRequest answers a cut-off body with a refusal (400), never a rejection', async () => {
    let settle!: (v: unknown) => void;
    const outcome = new Promise((resolve) => (settle = resolve));
    const port = await serve((req) => receiveNodeRequest(req, { secret: SECRET }), settle);
    await sendCutShort(port);
    const result = await outcome;
    expect(result).toEqual({ ok: false, reason: 'incomplete body' });
    expect(refusalStatus(result as { ok: false; reason: 'incomplete body' })).toBe(400);
  });

  it('packages/app-sdk/examples/node-http.ts (the README\'s handler, no try/catch) outlives a cut-off request and still answers', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--conditions=svc-source', '--import', 'tsx', join(ROOT, 'packages/app-sdk/examples/node-http.ts')], {
      cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', CLIENT_SECRET: SECRET, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      const listening = new Promise<void>((resolve, reject) => {
        child.stdout.on('data', () => /listening on/.test(output) && resolve());
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
      });
      await listening;
      await sendCutShort(port);
      // A signed rate request afterwards is answered: the process is still there.
      const body = JSON.stringify({ rate: { origin: { country: 'US' }, destination: { country: 'US' }, items: [{ grams: 400, quantity: 1, requires_shipping: true }], currency: 'USD', locale: 'en' } });
      const res = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST', body, headers: { 'content-type': 'application/json', 'x-svc-topic': 'shipping/rates', 'x-svc-hmac-sha256': platformSign(SECRET, body) },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { rates: unknown[] }).rates).toHaveLength(2);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await exited;
    }
  }, 40_000);

  it('a body a parser already read is a BodyAlreadyReadError at once, not a wait for ever', async () => {
    let settle!: (v: unknown) => void;
    const outcome = new Promise((resolve) => (settle = resolve));
    const port = await serve(async (req) => {
      // What express.json() does before the route runs: the stream is read to its end.
      for await (const _ of req) void _;
      return readNodeRequest(req);
    }, settle);
    await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(await outcome).toBeInstanceOf(BodyAlreadyReadError);
  });

  it('a Web Request: a body stream that fails is a refusal; one already read is a BodyAlreadyReadError', async () => {
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"id":'));
        controller.error(new Error('connection reset'));
      },
    });
    const cut = new Request('http://app.test/', { method: 'POST', body: failing, duplex: 'half' } as RequestInit & { duplex: 'half' });
    expect(await receiveWebRequest(cut, { secret: SECRET })).toEqual({ ok: false, reason: 'incomplete body' });

    const read = new Request('http://app.test/', { method: 'POST', body: '{}' });
    await read.text();
    await expect(receiveWebRequest(read, { secret: SECRET })).rejects.toBeInstanceOf(BodyAlreadyReadError);
  });
});

describe('header bags: names in any case, a repeated header never verifies (app-api.md Signature; C8.3)', () => {
  const body = JSON.stringify({ id: 7 });
  const good = platformSign(SECRET, body);

  it('a plain object with the names as sent (X-SVC-Hmac-SHA256, X-SVC-Topic) verifies and parses', () => {
    const headers = { 'X-SVC-Hmac-SHA256': good, 'X-SVC-Topic': 'orders/create', 'X-SVC-Shop-Domain': 'demo-store', 'X-SVC-Webhook-Id': 'w-1', 'X-SVC-Delivery-Attempt': '2' };
    expect(verifyMessage({ rawBody: body, headers, secret: SECRET })).toEqual({ ok: true, topic: 'orders/create', shop: 'demo-store', apiVersion: null, payload: { id: 7 } });
    expect(parseWebhook({ rawBody: body, headers, secret: SECRET })).toMatchObject({ ok: true, webhookId: 'w-1', attempt: 2 });
  });

  it('a repeated signature is refused with 401 whichever copy is the good one: as an array, or as two names differing in case', () => {
    for (const headers of [
      { 'x-svc-hmac-sha256': [good, 'AAAA'], 'x-svc-topic': 'orders/create' },
      { 'x-svc-hmac-sha256': ['AAAA', good], 'x-svc-topic': 'orders/create' },
      { 'x-svc-hmac-sha256': [good, good], 'x-svc-topic': 'orders/create' },
      { 'X-SVC-Hmac-SHA256': 'AAAA', 'x-svc-hmac-sha256': good, 'x-svc-topic': 'orders/create' },
    ]) {
      const verdict = parseWebhook({ rawBody: body, headers, secret: SECRET });
      expect(verdict).toEqual({ ok: false, reason: 'bad signature' });
      expect(refusalStatus(verdict as { ok: false; reason: 'bad signature' })).toBe(401);
    }
    // As Node itself joins a repeated header (node:http gives "a, b"): the same refusal.
    expect(verifyMessage({ rawBody: body, headers: { 'x-svc-hmac-sha256': `${good}, ${good}` }, secret: SECRET })).toEqual({ ok: false, reason: 'bad signature' });
  });

  it('a repeated topic is not taken as its first copy', () => {
    const verdict = parseWebhook({ rawBody: body, headers: { 'x-svc-hmac-sha256': good, 'x-svc-topic': ['orders/create', 'shop/redact'] }, secret: SECRET });
    expect(verdict).toMatchObject({ ok: false, reason: 'unknown topic' });
  });
});

describe('rate answers in the platform\'s minor units (C15.3)', () => {
  const money = isoCurrencies.map((c) => c.code).filter((code) => isoCurrency(code) !== null);

  it('currencyDigits is the platform\'s ISO 4217 table for every currency a store can have', () => {
    expect(money.length).toBeGreaterThan(150);
    expect(money.filter((code) => currencyDigits(code) !== platformDigits(code))).toEqual([]);
    expect([toMinorUnits(6.4, 'USD'), toMinorUnits(6.4, 'JPY'), toMinorUnits(6.4, 'BHD'), toMinorUnits(1.005, 'USD')]).toEqual([640, 6, 6400, 101]);
  });

  it('the example app\'s quote is read by the platform as the price it means, in every currency', async () => {
    const request = (currency: string): RateRequest => ({
      rate: {
        origin: { country: 'US', province: null, city: null, zip: null, address1: null, address2: null, phone: null },
        destination: { country: 'US', province: 'OR', city: 'Portland', zip: '97201', address1: '1 Main Street', address2: null, phone: null },
        items: [{ name: 'Tote', sku: null, quantity: 1, grams: 400, price: 1800, requires_shipping: true, product_id: 2, variant_id: null }],
        currency, locale: 'en',
      },
    });
    const quotes = await exampleQuotes(money.map(request));
    const wrong: string[] = [];
    money.forEach((currency, i) => {
      // Standard, domestic, one started kilogram: 5.90 + 0.50 = 6.40 (in hundredths, 640), to the currency's step.
      const step = 10 ** (2 - Math.min(2, platformDigits(currency)));
      const meant = Math.round(640 / step) * step;
      const read = parseRateReply(JSON.stringify({ rates: quotes[i] }), currency);
      if (read?.[0]?.price_minor !== meant) wrong.push(`${currency}: ${read?.[0]?.price_minor} hundredths, meant ${meant}`);
    });
    expect(wrong).toEqual([]);
  }, 30_000);
});

describe('svc-app: repeated options and repeated headers', () => {
  const capture = () => {
    const lines: string[] = [];
    return { lines, out: (l: string) => void lines.push(l) };
  };

  it('an option given twice is a usage error (exit 2), not the last one silently', async () => {
    const dir = tempDir('svc-sdk-cli-');
    const file = join(dir, 'request.json');
    const body = '{"id":1}';
    writeFileSync(file, JSON.stringify({ headers: { 'X-SVC-Hmac-SHA256': platformSign(SECRET, body), 'X-SVC-Topic': 'orders/create' }, body }));
    const { lines, out } = capture();
    expect(await main(['webhook', 'verify', '--secret', 'wrong', '--request', file, '--secret', SECRET], () => {}, out)).toBe(2);
    expect(lines.join('\n')).toMatch(/--secret given more than once[\s\S]*usage:/);
    // Given once, the saved request (header names as sent) verifies.
    expect(await main(['webhook', 'verify', '--secret', SECRET, '--request', file], () => {})).toBe(0);
  });

  it('webhook verify: a saved request with the signature twice (names differing in case) is refused, whichever copy is good', async () => {
    const dir = tempDir('svc-sdk-cli-');
    const body = '{"id":1}';
    const good = platformSign(SECRET, body);
    for (const headers of [{ 'X-SVC-Hmac-SHA256': 'AAAA', 'x-svc-hmac-sha256': good }, { 'x-svc-hmac-sha256': good, 'X-SVC-Hmac-SHA256': 'AAAA' }]) {
      const file = join(dir, 'twice.json');
      writeFileSync(file, JSON.stringify({ headers: { ...headers, 'x-svc-topic': 'orders/create' }, body }));
      const { lines, out } = capture();
      expect(await main(['webhook', 'verify', '--secret', SECRET, '--request', file], out)).toBe(1);
      expect(JSON.parse(lines.join('\n'))).toEqual({ ok: false, reason: 'bad signature' });
    }
  });
});

describe('createAppClient: Retry-After as a proxy in front of the platform may write it (app-api.md Limits)', () => {
  /** A loopback server answering every request with `status` and `Retry-After: value`; counts what it was sent. */
  async function refusing(status: number, value: string): Promise<{ url: string; sends: () => number }> {
    let sends = 0;
    const server = createServer((req, res) => {
      sends++;
      req.resume();
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': value }).end('{"error":"Too Many Requests","message":"slow down"}');
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sends: () => sends };
  }

  it('a fractional Retry-After longer than the client waits is not read as a date in the past: the answer comes back, sent once', async () => {
    for (const [status, value] of [[429, '90.5'], [503, '120.25'], [429, '61']] as const) {
      const target = await refusing(status, value);
      const client = createAppClient({ baseUrl: target.url, accessToken: 'svcat_x', retry: { maxRetryAfterSeconds: 60, baseDelayMs: 1 } });
      const res = await client.GET('/api/v1/orders.json');
      expect({ value, status: res.response.status, sends: target.sends() }).toEqual({ value, status, sends: 1 });
    }
  });
});

describe('createAppClient: the rate-limit budget across clocks that disagree (app-api.md Limits)', () => {
  it('a spent budget whose X-RateLimit-Reset lies an hour ahead (the platform\'s clock ahead of ours) costs at most the one-second window', async () => {
    let sends = 0;
    const server = createServer((req, res) => {
      sends++;
      req.resume();
      const reset = Math.floor(Date.now() / 1000) + 3600;
      res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) }).end('{"orders":[]}');
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = createAppClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, accessToken: 'svcat_x' });
    expect((await client.GET('/api/v1/orders.json')).response.status).toBe(200);
    // The budget is spent: the next call waits for the window, then goes (before: for the hour).
    expect((await client.GET('/api/v1/orders.json')).response.status).toBe(200);
    expect(sends).toBe(2);
  }, 15_000);
});

describe('an empty secret is a configuration error, never a pass (app-api.md Signature; C4.2; C4.8)', () => {
  it('verifyMessage, verifyBodySignature, verifyHandoff and verifySessionToken refuse to check with "" (an unset CLIENT_SECRET), even what is signed with the empty key', async () => {
    const body = '{"shop_id":"x","shop_domain":"victim"}';
    const forged = { 'x-svc-hmac-sha256': signBody(body, ''), 'x-svc-topic': 'shop/redact', 'x-svc-shop-domain': 'victim' };
    expect(() => verifyMessage({ rawBody: body, headers: forged, secret: '' })).toThrow(TypeError);
    expect(() => verifyMessage({ rawBody: body, headers: {}, secret: undefined as unknown as string })).toThrow(TypeError);
    expect(() => verifyBodySignature(body, forged['x-svc-hmac-sha256'], '')).toThrow(TypeError);
    await expect(receiveWebRequest(new Request('http://app.test/', { method: 'POST', body, headers: forged }), { secret: '' })).rejects.toBeInstanceOf(TypeError);

    const query = new URLSearchParams({ code: 'svccode_x', shop: 'victim', state: 's', timestamp: String(Math.floor(Date.now() / 1000)) });
    const message = [...query].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join('&');
    query.set('hmac', createHmac('sha256', '').update(message).digest('hex'));
    expect(() => verifyHandoff(query, '')).toThrow(TypeError);

    const token = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ dest: 'victim', sub: 'x', aud: 'a', iss: 'i', exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url')}.${createHmac('sha256', '').update('x').digest('base64url')}`;
    await expect(verifySessionToken(token, { clientId: 'a', clientSecret: '', issuer: 'i' })).rejects.toThrow();
  });

  it('verifySessionToken refuses to check without an issuer or client id (jose would skip the iss/aud checks): a token of another app or platform never passes', async () => {
    const sign = (claims: Record<string, unknown>) => {
      const head = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return `${head}.${createHmac('sha256', 'app-secret').update(head).digest('base64url')}`;
    };
    const exp = Math.floor(Date.now() / 1000) + 60;
    const platform = 'https://platform.test';
    const otherApp = sign({ dest: 'victim', sub: 'x', aud: 'another-app', iss: platform, exp }); // this platform, another app
    const otherPlatform = sign({ dest: 'victim', sub: 'x', aud: 'this-app', iss: 'https://elsewhere.test', exp }); // another platform
    // With both given, each is refused, and a token of this app and platform passes.
    const full = { clientId: 'this-app', clientSecret: 'app-secret', issuer: platform };
    await expect(verifySessionToken(otherApp, full)).rejects.toThrow();
    await expect(verifySessionToken(otherPlatform, full)).rejects.toThrow();
    await expect(verifySessionToken(sign({ dest: 'shop', sub: 'x', aud: 'this-app', iss: platform, exp }), full)).resolves.toMatchObject({ shop: 'shop' });
    // Without the client id, jose would not check aud (another app's token would pass); without the issuer, not iss.
    await expect(verifySessionToken(otherApp, { ...full, clientId: undefined as unknown as string })).rejects.toBeInstanceOf(TypeError);
    await expect(verifySessionToken(otherPlatform, { ...full, issuer: undefined as unknown as string })).rejects.toBeInstanceOf(TypeError);
    await expect(verifySessionToken(otherApp, { ...full, clientId: '', issuer: '' })).rejects.toBeInstanceOf(TypeError);
  });
});

describe('function fixtures (C11): a fixture file that is not JSON', () => {
  it('runFixtures names the file, as svc-app names a request or input file that is not JSON', async () => {
    const dir = tempDir('svc-sdk-fixtures-');
    writeFileSync(join(dir, 'a-good.json'), JSON.stringify({ target: 'cart.validations.generate.run', expression: '{"operations": []}', input: {}, expectOutput: { operations: [] } }));
    writeFileSync(join(dir, 'b-broken.json'), '{ "target": "cart.validations.generate.run", }');
    const err = await runFixtures(dir).then(() => null, (e: Error) => e);
    expect(err?.message).toMatch(new RegExp(`^fixture ${join(dir, 'b-broken.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not JSON: `));
  });
});
