// Answers given at the HTTP edge, before any route runs, in the service's documented error shapes
// (C5.1: the endpoint's shape; C5.5: the version header under /api/v1), over real sockets: a
// request without Host (Node refused it with an empty 400 of its own), a request arriving on a
// kept-alive connection while the service shuts down (Fastify answered its own 503 body), HEAD on
// the GET routes that write (Fastify derived a HEAD route that ran the handler), and the worker's
// health port, whose errors had Fastify's default bodies (src/http/edge.ts, src/platform/health-app.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { createHarness, listenOnLoopback, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { createTestApp, signupMerchant, signupPartner, storeWithApp } from './helpers/actors.js';
import { routeTable } from '../src/surfaces/surface.js';
import { buildHealthApp } from '../src/platform/health-app.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Every answer in `text` (HTTP/1.1 responses one after another, each with a Content-Length). */
function parseResponses(text: string): RawResponse[] {
  const answers: RawResponse[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? rest.length - end - 4);
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}

/** A socket to `port` whose whole output is read when the server closes it. */
function connection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (d) => chunks.push(d));
  socket.on('error', () => undefined); // the server may reset after answering
  const closed = new Promise<RawResponse[]>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection within 10 s: ${Buffer.concat(chunks).toString().slice(0, 300)}`));
    }, 10_000);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponses(Buffer.concat(chunks).toString('utf8')));
    });
  });
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, connected, closed, received: () => Buffer.concat(chunks).toString('utf8') };
}

/** Sends `text` as is (not half-closing: Node aborts a request whose client does) and reads the answers. */
async function raw(port: number, text: string): Promise<RawResponse[]> {
  const c = connection(port);
  c.socket.write(text);
  return c.closed;
}

const ENVELOPE = (status: number) => ({ status, state: 'error', message: expect.any(String), data: null, count: null, pagination: null });

/** `res` is `status` as the documented `shape` body, with a request id, closing the connection. */
function expectShaped(res: RawResponse | undefined, status: number, shape: 'envelope' | 'errors', path: string, what: string) {
  expect(res, what).toBeDefined();
  expect(res!.status, `${what}: ${res!.body.slice(0, 200)}`).toBe(status);
  expect(res!.headers['content-type'], what).toMatch(/^application\/json/);
  expect(res!.headers['x-request-id'], what).toEqual(expect.any(String));
  expect(res!.headers.connection, what).toBe('close');
  if (path.startsWith('/api/v1/')) expect(res!.headers['x-svc-api-version'], what).toBe('2026-06');
  else expect(res!.headers['x-svc-api-version'], what).toBeUndefined();
  // Refused before the App API gate: not counted, so no rate-limit headers (as a 401).
  expect(res!.headers['x-ratelimit-limit'], what).toBeUndefined();
  const body = JSON.parse(res!.body);
  if (shape === 'errors') expect(body, what).toEqual({ errors: { base: [expect.any(String)] } });
  else expect(body, what).toEqual(ENVELOPE(status));
}

const ERRORS_BODY = /^\/api\/v1\/(products|collections|orders|customers|product_listings|webhooks)\b/;
const shapeOfPath = (path: string) =>
  (ERRORS_BODY.test(path) && !path.includes('fulfillments')) || path === UNKNOWN_API_PATH ? 'errors' : 'envelope';
/** An App API path no route has: the App API's default shape, the errors body. */
const UNKNOWN_API_PATH = '/api/v1/nothing-here.json';
const urlOf = (path: string) => path.replace(/\{(\w+)\}/g, '0190a000-0000-7000-8000-000000000001');

let h: Harness;
let port: number;
let token: string;
let operations: { method: string; path: string }[];

beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
  token = (await storeWithApp(h, { scopes: ['read_products'] })).accessToken;
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  operations = Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => ({ method: method.toUpperCase(), path })));
  port = Number(new URL(await listenOnLoopback(h)).port);
}, 60_000);
afterAll(() => h?.close());

describe('an HTTP/1.1 request without Host: 400 in the shape of the endpoint it names', () => {
  it('every operation of the reference, and an unknown App API path: 400 in its shape, version header under /api/v1, nothing run', async () => {
    const targets = [...operations, { method: 'GET', path: UNKNOWN_API_PATH }, { method: 'GET', path: '/nothing-here' }];
    for (const op of targets) {
      const [res, ...more] = await raw(port, `${op.method} ${urlOf(op.path)} HTTP/1.1\r\nAuthorization: Bearer ${token}\r\nContent-Length: 0\r\n\r\n`);
      expectShaped(res, 400, shapeOfPath(op.path), op.path, `${op.method} ${op.path}`);
      expect(JSON.stringify(JSON.parse(res.body)), `${op.method} ${op.path}`).toContain('Host header is required');
      expect(more, 'the connection is closed after the refusal').toEqual([]);
    }
  }, 120_000);

  // Found in review: a request line in absolute form (`GET http://host/api/v1/... HTTP/1.1`, which a
  // server must accept, RFC 9112 3.2.2) names its endpoint by the URL's path, as the router reads it;
  // without Host, the refusal went out without the version header, and an App API path no route has
  // in the envelope rather than the App API's errors body.
  it('a request line in absolute form: the same 400 as the path alone', async () => {
    const envelopeApi = operations.find((op) => op.path.startsWith('/api/v1/') && shapeOfPath(op.path) === 'envelope')!;
    const targets = [{ method: 'GET', path: '/api/v1/products.json' }, envelopeApi, { method: 'GET', path: UNKNOWN_API_PATH }, { method: 'GET', path: '/apps/developer/apps' }];
    for (const op of targets) {
      const [res] = await raw(port, `${op.method} http://svc.test${urlOf(op.path)} HTTP/1.1\r\nContent-Length: 0\r\n\r\n`);
      expectShaped(res, 400, shapeOfPath(op.path), op.path, `${op.method} http://svc.test${op.path}`);
    }
  });

  it('a POST without Host runs nothing: no account is made', async () => {
    const email = `nohost-${Date.now()}@example.com`;
    const body = JSON.stringify({ email, password: 'correct-horse', name: 'Merchant', storeName: 'No Host' });
    const [res] = await raw(port, `POST /auth/signup HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expectShaped(res, 400, 'envelope', '/auth/signup', 'POST /auth/signup');
    expect((await h.db.query('SELECT 1 FROM users WHERE lower(email) = $1', [email])).rows).toEqual([]);
    // The same request with Host makes the account.
    expect((await h.req('POST', '/auth/signup', { payload: body, headers: { 'content-type': 'application/json' } })).statusCode).toBe(201);
  });

  it('the dashboard answers its own error page; HTTP/1.0 without Host and HTTP/1.1 with it are served as before', async () => {
    const [page] = await raw(port, 'GET /dashboard/login HTTP/1.1\r\n\r\n');
    expect(page.status).toBe(400);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers.connection).toBe('close');

    const [old] = await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
    expect(JSON.parse(old.body)).toEqual({ status: 'ok' });
    const [withHost] = await raw(port, `GET /api/v1/products.json HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
    expect(withHost.status).toBe(200);
    expect(withHost.headers['x-ratelimit-limit']).toEqual(expect.any(String));
  });
});

describe('a request on a kept-alive connection while the service shuts down', () => {
  it('503 in the shape of its endpoint, Retry-After and Connection: close; the request under way is answered', async () => {
    const closing = await createHarness({}, { limiter: unlimitedLimiter() });
    const closingPort = Number(new URL(await listenOnLoopback(closing)).port);
    // A login whose body has not all arrived: the connection is busy, so `close()` keeps it open.
    const body = JSON.stringify({ email: 'nobody@example.com', password: 'not-the-password' });
    const started = (c: ReturnType<typeof connection>) =>
      c.socket.write(`POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    const next = [
      { path: '/api/v1/products.json', shape: 'errors' as const, extra: `Authorization: Bearer ${token}\r\n` },
      { path: '/apps/developer/apps', shape: 'envelope' as const, extra: '' },
      { path: '/api/v1/nothing-here.json', shape: 'errors' as const, extra: '' },
    ];
    const conns = next.map(() => connection(closingPort));
    await Promise.all(conns.map((c) => c.connected));
    conns.forEach(started);
    // Every login has reached its route (the server has its headers) before the close begins.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closed = closing.close();
    for (let i = 0; closing.app.server.listening && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(closing.app.server.listening, 'the close has begun').toBe(false);

    conns.forEach((c, i) => c.socket.write(`${body.slice(5)}GET ${next[i].path} HTTP/1.1\r\nHost: x\r\n${next[i].extra}\r\n`));
    for (const [i, c] of conns.entries()) {
      const [login, refused, ...more] = await c.closed;
      expect(login?.status, c.received()).toBe(401);
      expect(JSON.parse(login.body)).toEqual(ENVELOPE(401));
      expectShaped(refused, 503, next[i].shape, next[i].path, next[i].path);
      expect(refused.headers['retry-after']).toBe('1');
      expect(more).toEqual([]);
    }
    await closed;
  }, 60_000);
});

/**
 * The GET routes whose handlers write, found by reading every GET handler and the services it calls
 * (docs/decisions.md, "Hardening: input"): Fastify derives a HEAD route from every GET, which runs
 * the handler and drops the body, so these have none. Every other GET reads only.
 */
const WRITING_GETS = [
  // A pending installation and an authorization code (C4.1, C4.2).
  'GET /apps/oauth/authorize',
  // Asks every shipping app for rates (outbound calls), caches their answers, records function runs.
  'GET /storefront/:storeURL/checkouts/:token/shipping_rates',
];

describe('HEAD runs no GET handler that writes', () => {
  it('the GET routes without a derived HEAD route are exactly the writing ones; every other GET has one', () => {
    const table = routeTable(h.app);
    const gets = table.filter((r) => r.method === 'GET').map((r) => r.url);
    const heads = new Set(table.filter((r) => r.method === 'HEAD').map((r) => r.url));
    expect(gets.filter((url) => !heads.has(url)).map((url) => `GET ${url}`).sort()).toEqual([...WRITING_GETS].sort());
  });

  it('HEAD /apps/oauth/authorize: the 404 of an unknown route, no installation and no code made; GET still authorizes', async () => {
    const merchant = await signupMerchant(h);
    const app = await createTestApp(h, (await signupPartner(h)).token);
    const count = async () =>
      (await h.db.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM installations WHERE store_id = $1)::int + (SELECT count(*) FROM oauth_codes c JOIN installations i ON i.id = c.installation_id WHERE i.store_id = $1)::int AS n`,
        [merchant.storeId],
      )).rows[0].n;
    const head = await h.req('HEAD', `/apps/oauth/authorize?client_id=${app.clientId}`, { token: merchant.token });
    expect(head.statusCode).toBe(404);
    expect(await count()).toBe(0);
    const unknown = await h.req('HEAD', '/apps/oauth/nothing-here', { token: merchant.token });
    expect([head.statusCode, head.headers['content-type']]).toEqual([unknown.statusCode, unknown.headers['content-type']]);
    const get = await h.req('GET', `/apps/oauth/authorize?client_id=${app.clientId}`, { token: merchant.token });
    expect(get.statusCode).toBe(200);
    expect(await count()).toBeGreaterThan(0);
  });
});

describe("the worker's health port answers errors as the api port does on its operator paths", () => {
  let health: FastifyInstance;
  let healthPort: number;
  beforeAll(async () => {
    health = await buildHealthApp(h.deps);
    await health.listen({ port: 0, host: '127.0.0.1' });
    healthPort = (health.server.address() as net.AddressInfo).port;
  });
  afterAll(() => health?.close());

  const cases: [string, number, string][] = [
    ['an unknown route', 404, 'GET /nothing-here HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['an unknown method of a health route', 404, 'DELETE /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['malformed JSON', 400, 'POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1\r\nConnection: close\r\n\r\n{'],
    ['an unsupported content type on an unknown route', 404, 'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: text/x-nothing\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab'],
    ['a body over the limit', 413, `POST /readyz HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\nConnection: close\r\n\r\n[`],
    ['a URL that cannot be decoded', 400, 'GET /healthz%FF%FE HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['a request the HTTP parser refuses', 400, 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\nConnection: close\r\n\r\n'],
    ['an Expect other than 100-continue', 417, 'GET /metrics HTTP/1.1\r\nHost: x\r\nExpect: coffee\r\nConnection: close\r\n\r\n'],
    ['no Host', 400, 'GET /readyz HTTP/1.1\r\nConnection: close\r\n\r\n'],
  ];
  for (const [what, status, text] of cases) {
    it(`${what}: ${status} as an envelope, the same answer as the api port's`, async () => {
      const [onWorker] = await raw(healthPort, text);
      const [onApi] = await raw(port, text);
      expect(onWorker?.status, onWorker?.body).toBe(status);
      expect(onWorker.headers['content-type']).toMatch(/^application\/json/);
      expect(onWorker.headers['x-request-id']).toEqual(expect.any(String));
      expect(JSON.parse(onWorker.body)).toEqual(ENVELOPE(status));
      expect([onWorker.status, JSON.parse(onWorker.body)]).toEqual([onApi.status, JSON.parse(onApi.body)]);
    });
  }
});
