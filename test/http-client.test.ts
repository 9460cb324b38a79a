// The outbound client of webhook attempts and shipping rate requests (src/webhooks/http-client.ts),
// against real servers that answer, answer long, stall, refuse: the status and the kept prefix of
// the body; a response over the read limit cut off without waiting for its end; the whole-attempt
// deadline whether nothing, or headers but not the body, ever come; refused, blocked and invalid
// addresses as errors; and the client still serving after each of those. It never throws.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookHttp } from '../src/webhooks/http-client.js';

let server: Server;
let base: string;
const received: { path: string; body: string; signature: string | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url!, body: Buffer.concat(chunks).toString('utf8'), signature: req.headers['x-test-signature'] as string | undefined });
      if (req.url === '/ok') return void res.writeHead(201, { 'content-type': 'text/plain' }).end('created: ✓');
      if (req.url === '/empty') return void res.writeHead(204).end();
      if (req.url === '/long') return void res.writeHead(200).end('x'.repeat(10_000));
      // Far over the read limit, sent slowly: the client must stop reading, not wait for the end.
      if (req.url === '/endless') {
        res.writeHead(200);
        const timer = setInterval(() => res.write('y'.repeat(16 * 1024)), 5);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (req.url === '/headers-only') return void res.writeHead(200).write('part');
      // '/silent': never answers.
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('WebhookHttp.send', () => {
  it('posts the exact bytes and headers; gives the status and the body (the first keepBytes of it)', async () => {
    const client = new WebhookHttp(true, 5000);
    try {
      const body = JSON.stringify({ hello: 'wörld' });
      const ok = await client.send(`${base}/ok`, { 'content-type': 'application/json', 'x-test-signature': 'sig' }, body);
      expect(ok).toMatchObject({ status: 201, responseBody: 'created: ✓', error: null });
      expect(ok.durationMs).toBeGreaterThanOrEqual(0);
      expect(received.at(-1)).toEqual({ path: '/ok', body, signature: 'sig' });
      expect(await client.send(`${base}/empty`, {}, '')).toMatchObject({ status: 204, responseBody: '', error: null });
      expect(await client.send(`${base}/long`, {}, '')).toMatchObject({ status: 200, responseBody: 'x'.repeat(4096), error: null });
      expect(await client.send(`${base}/long`, {}, '', { keepBytes: 100_000 })).toMatchObject({ status: 200, responseBody: 'x'.repeat(10_000) });
    } finally {
      await client.close();
    }
  });

  it('cuts off a response over the read limit with its status and prefix, without waiting for its end', async () => {
    const client = new WebhookHttp(true, 5000);
    try {
      const t0 = performance.now();
      const r = await client.send(`${base}/endless`, {}, '', { keepBytes: 1000 });
      expect(r).toMatchObject({ status: 200, responseBody: 'y'.repeat(1000), error: null });
      expect(performance.now() - t0).toBeLessThan(3000);
      expect(await client.send(`${base}/ok`, {}, '')).toMatchObject({ status: 201 });
    } finally {
      await client.close();
    }
  });

  it('a deadline for the whole attempt: no answer, or headers and then nothing, is a timeout at the deadline; the client goes on serving', async () => {
    const client = new WebhookHttp(true, 5000);
    try {
      for (const path of ['/silent', '/headers-only']) {
        const t0 = performance.now();
        const r = await client.send(`${base}${path}`, {}, '', { timeoutMs: 300 });
        const took = performance.now() - t0;
        expect(r, path).toMatchObject({ status: null, responseBody: null, error: 'timeout' });
        expect(took).toBeGreaterThanOrEqual(290);
        expect(took).toBeLessThan(2500);
      }
      // Never longer than the client's own deadline.
      const short = new WebhookHttp(true, 200);
      try {
        expect(await short.send(`${base}/silent`, {}, '', { timeoutMs: 60_000 })).toMatchObject({ error: 'timeout' });
      } finally {
        await short.close();
      }
      expect(await client.send(`${base}/ok`, {}, '')).toMatchObject({ status: 201, error: null });
    } finally {
      await client.close();
    }
  });

  it('refused, blocked and invalid addresses are errors, never exceptions', async () => {
    const refused = createServer();
    await new Promise<void>((resolve) => refused.listen(0, '127.0.0.1', resolve));
    const port = (refused.address() as AddressInfo).port;
    await new Promise((resolve) => refused.close(resolve));

    const open = new WebhookHttp(true, 5000);
    const strict = new WebhookHttp(false, 5000);
    try {
      expect(await open.send(`http://127.0.0.1:${port}/x`, {}, '')).toMatchObject({ status: null, responseBody: null, error: 'network_error: ECONNREFUSED' });
      expect(await strict.send(`${base}/ok`, {}, '')).toMatchObject({ status: null, error: 'blocked_address' });
      expect(await strict.send('http://localhost:9/x', {}, '')).toMatchObject({ status: null, error: 'blocked_address' });
      expect(await open.send('not a url', {}, '')).toMatchObject({ status: null, error: 'invalid_address' });
      expect(await open.send(`${base}/ok`, {}, '')).toMatchObject({ status: 201 });
    } finally {
      await Promise.all([open.close(), strict.close()]);
    }
  });

  it('many attempts at once on one origin, some stalling: each settles with its own outcome', async () => {
    // Eight connections, four held by silent servers to the deadline: the rest go through the other four.
    const client = new WebhookHttp(true, 5000, 8);
    try {
      const paths = Array.from({ length: 40 }, (_, i) => (i % 10 === 0 ? '/silent' : i % 2 ? '/ok' : '/long'));
      const results = await Promise.all(paths.map((p) => client.send(`${base}${p}`, {}, '', { timeoutMs: 1500 })));
      results.forEach((r, i) => {
        if (paths[i] === '/silent') expect(r.error).toBe('timeout');
        else expect(r).toMatchObject({ status: paths[i] === '/ok' ? 201 : 200, error: null });
      });
    } finally {
      await client.close();
    }
  });
});
