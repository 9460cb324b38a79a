// Adversarial review of the App API resources and endpoints (app-api.md Resources, Endpoints,
// Errors; C5, C6, C14), round 2 of 2026-11-27. Each test names the clause it checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { createHarness, listenOnLoopback, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { storeWithApp } from './helpers/actors.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

describe('C6.9 files: any request under /api/v1/files is a 404 envelope after authentication', () => {
  it('a path Fastify cannot percent-decode is the 404 too, not a 400 about the URL', async () => {
    const s = await storeWithApp(h, { scopes: ['read_shipping'] });
    for (const method of ['GET', 'POST', 'DELETE']) {
      const res = await h.req(method, '/api/v1/files/%FF', { token: s.accessToken });
      expectEnvelopeError(res, 404);
      expect(res.json().message).toBe('The files endpoint is not available yet');
      expect(res.headers['x-svc-api-version']).toBe('2026-06');
      expect(res.headers['x-ratelimit-limit']).toBe('20');
    }
    // Authentication still comes first (C6.9 "after authentication"; Rules 1).
    const stranger = await h.req('GET', '/api/v1/files/%FF');
    expectEnvelopeError(stranger, 401);
    expect(stranger.headers['x-ratelimit-limit']).toBeUndefined();
    // Only the files endpoint: another endpoint's malformed URL stays its 400 (C5.1 shape).
    expectEnvelopeError(await h.req('GET', '/api/v1/shipping_zones/%FF.json', { token: s.accessToken }), 400, 'Malformed URL');
  });
});

// A request target in absolute form (`GET http://host/api/v1/... HTTP/1.1`, RFC 9112 3.2.2) is
// served like its path (the router reads the path); the answers given before routing must read it
// the same way: the App API gate (Rules 1-2, C5.5) and the endpoint's shape (C5.1).
describe('absolute-form request targets refused before routing are App API calls all the same', () => {
  let port: number;
  let token: string;
  beforeAll(async () => {
    token = (await storeWithApp(h, { scopes: ['read_products'] })).accessToken;
    port = Number(new URL(await listenOnLoopback(h)).port);
  });

  /** Sends one request over a socket and reads the answer (status, lower-cased headers, body). */
  function raw(text: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (d) => chunks.push(d));
      socket.on('error', () => undefined);
      const timer = setTimeout(() => { socket.destroy(); reject(new Error('no answer within 10 s')); }, 10_000);
      socket.on('close', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        const end = text.indexOf('\r\n\r\n');
        const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) });
      });
      socket.write(text);
    });
  }
  const get = (target: string, extra = '') => raw(`GET ${target} HTTP/1.1\r\nHost: svc.test\r\n${extra}Connection: close\r\n\r\n`);

  it('a path Fastify cannot percent-decode: 401 errors body for a stranger, then the 400 in the endpoint\'s shape with the App API headers', async () => {
    const stranger = await get('http://svc.test/api/v1/products/%FF.json');
    expect(stranger.status, stranger.body).toBe(401);
    expect(JSON.parse(stranger.body)).toEqual({ errors: { base: [expect.any(String)] } });
    expect(stranger.headers['x-svc-api-version']).toBe('2026-06');
    expect(stranger.headers['x-ratelimit-limit']).toBeUndefined();

    const app = await get('http://svc.test/api/v1/products/%FF.json', `Authorization: Bearer ${token}\r\n`);
    expect(app.status, app.body).toBe(400);
    expect(JSON.parse(app.body)).toEqual({ errors: { base: ['Malformed URL'] } });
    expect(app.headers['x-svc-api-version']).toBe('2026-06');
    expect(app.headers['x-ratelimit-limit']).toBe('20');

    const files = await get('http://svc.test/api/v1/files/%FF', `Authorization: Bearer ${token}\r\n`);
    expect(files.status, files.body).toBe(404);
    expect(JSON.parse(files.body)).toMatchObject({ status: 404, state: 'error', data: null });
  });

  it('an Expect other than 100-continue: 417 in the endpoint\'s shape with the version header', async () => {
    const res = await get('http://svc.test/api/v1/products.json', 'Expect: coffee\r\n');
    expect(res.status, res.body).toBe(417);
    expect(JSON.parse(res.body)).toEqual({ errors: { base: [expect.any(String)] } });
    expect(res.headers['x-svc-api-version']).toBe('2026-06');
  });
});
