// Requests Node's HTTP parser refuses before Fastify sees a request (a request line and headers over
// the 16 KiB limit, broken chunked framing, Content-Length with Transfer-Encoding, a method or a
// path that is not HTTP) are answered in the documented error shape of the endpoint the request
// line names (C5.1: the errors body for the App API resources, the envelope elsewhere), with the
// version header under /api/v1 (C5.5), a request id, and nothing done: the request never ran.
// Real HTTP over a socket: `inject` has no parser to refuse anything. Every operation of the
// OpenAPI document is swept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { createHarness, listenOnLoopback, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';

let h: Harness;
let port: number;
let token: string;
let storeId: string;
let operations: { method: string; path: string }[];

beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
  const s = await storeWithApp(h, { scopes: ['read_products', 'write_products'] });
  token = s.accessToken;
  storeId = s.merchant.storeId;
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  operations = Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => ({ method: method.toUpperCase(), path })));
  port = Number(new URL(await listenOnLoopback(h)).port);
}, 60_000);
afterAll(() => h?.close());

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `text` as is and reads the whole answer (the server closes the connection). */
function raw(text: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 5 s: ${Buffer.concat(chunks).toString().slice(0, 200)}`));
    }, 5000);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => undefined); // the server may reset after answering
    socket.on('close', () => {
      clearTimeout(timer);
      // The last answer on the connection: a route may answer before the body whose framing then
      // breaks (`GET /api/v1/files.json` with a body), and the refusal follows that answer.
      let all = Buffer.concat(chunks).toString('utf8');
      for (;;) {
        const end = all.indexOf('\r\n\r\n');
        const [statusLine, ...lines] = all.slice(0, end).split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const length = Number(headers['content-length'] ?? NaN);
        const rest = all.slice(end + 4);
        if (end >= 0 && Number.isFinite(length) && rest.length > length && rest.slice(length).startsWith('HTTP/1.1 ')) {
          all = rest.slice(length);
          continue;
        }
        return resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest });
      }
    });
    // Not `end`: Node's server aborts a request whose client half-closes before the answer.
    socket.write(text);
  });
}

const ERRORS_BODY = /^\/api\/v1\/(products|collections|orders|customers|product_listings|webhooks)\b/;
const shapeOf = (path: string) => (ERRORS_BODY.test(path) && !path.includes('fulfillments') ? 'errors' : 'envelope');

/** The answer is `status` in the shape of `path`'s endpoint, with the headers every answer carries. */
function expectShaped(res: RawResponse, status: number, path: string, what: string) {
  expect(res.status, `${what}: ${res.body.slice(0, 200)}`).toBe(status);
  expect(res.headers['content-type'], what).toMatch(/^application\/json/);
  expect(res.headers['x-request-id'], what).toEqual(expect.any(String));
  let body: any;
  expect(() => (body = JSON.parse(res.body)), `${what}: ${res.body.slice(0, 200)}`).not.toThrow();
  if (path.startsWith('/api/v1/')) expect(res.headers['x-svc-api-version'], what).toBe('2026-06');
  else expect(res.headers['x-svc-api-version'], what).toBeUndefined();
  if (shapeOf(path) === 'errors') {
    expect(Object.keys(body), what).toEqual(['errors']);
    expect(body.errors.base, what).toEqual([expect.any(String)]);
  } else {
    expect(body, what).toEqual({ status, state: 'error', message: expect.any(String), data: null, count: null, pagination: null });
  }
}

const urlOf = (path: string) => path.replace(/\{(\w+)\}/g, '0190a000-0000-7000-8000-000000000001');
const auth = () => `Authorization: Bearer ${token}\r\n`;

describe('requests the HTTP parser refuses keep the endpoint shape (C5.1, C5.5)', () => {
  it('a request line over the header limit (a very long URL) -> 431 in the shape of every operation', async () => {
    for (const op of operations) {
      const url = `${urlOf(op.path)}?q=${'a'.repeat(20_000)}`;
      const res = await raw(`${op.method} ${url} HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`);
      expectShaped(res, 431, op.path, `${op.method} ${op.path}`);
    }
  }, 120_000);

  it('a header over the limit, broken chunked framing, Content-Length with Transfer-Encoding, an unknown Expect: the shape of every operation', async () => {
    for (const op of operations) {
      const url = urlOf(op.path);
      const start = `${op.method} ${url} HTTP/1.1\r\nHost: x\r\n${auth()}`;
      const cases: [string, number, string][] = [
        ['header over the limit', 431, `${start}X-Big: ${'b'.repeat(20_000)}\r\nConnection: close\r\n\r\n`],
        ['bad chunk size', 400, `${start}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`],
        ['Content-Length and Transfer-Encoding', 400, `${start}Content-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
        ['two Content-Lengths', 400, `${start}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}`],
        ['a header name with a space', 400, `${start}Bad Header: x\r\nConnection: close\r\n\r\n`],
        ['an Expect other than 100-continue', 417, `${start}Expect: coffee\r\nConnection: close\r\n\r\n`],
      ];
      for (const [what, status, text] of cases) {
        const res = await raw(text);
        // A route that answers before reading the body (`GET /api/v1/files.json`, 404) has answered:
        // the broken framing after it only closes the connection (nothing is written into an answer).
        const answeredFirst = !/over the limit|Expect/.test(what) && res.status !== status && res.status >= 400 && res.status < 500;
        expectShaped(res, answeredFirst ? res.status : status, op.path, `${op.method} ${op.path}: ${what}`);
      }
    }
  }, 120_000);

  it('a request line that is not HTTP (unknown method, raw bytes in the path) is refused in the shape its path names', async () => {
    for (const [line, path] of [
      ['BREW /api/v1/products.json HTTP/1.1', '/api/v1/products.json'],
      ['GET /api/v1/products/\u00e9.json HTTP/1.1', '/api/v1/products/{id}.json'],
      ['GET /api/v1/shipping_zones/\u00e9.json HTTP/1.1', '/api/v1/shipping_zones/{id}.json'],
      ['GET /products/\u00e9 HTTP/1.1', '/products/{id}'],
      ['GET http://x/api/v1/orders/\u0001.json HTTP/1.1', '/api/v1/orders/{id}.json'],
    ]) {
      expectShaped(await raw(Buffer.from(`${line}\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`, 'latin1')), 400, path, line);
    }
    // Not even a request line: the envelope (no endpoint is named).
    expectShaped(await raw('\u0000\u0001garbage\r\n\r\n'), 400, '/', 'garbage');
  });

  it('nothing runs for a refused request: a create whose framing breaks after its body writes no product', async () => {
    const body = JSON.stringify({ title: 'framing-should-not-exist' });
    const res = await raw(`POST /api/v1/products.json HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    expectShaped(res, 400, '/api/v1/products.json', 'create with CL and TE');
    const rows = await h.db.query('SELECT 1 FROM products WHERE store_id = $1 AND title = $2', [storeId, 'framing-should-not-exist']);
    expect(rows.rows).toHaveLength(0);
  });

  it('the connection of a well-formed request is unaffected (control)', async () => {
    const res = await raw(`GET /api/v1/products.json HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`);
    expect(res.status, res.body).toBe(200);
  });
});
