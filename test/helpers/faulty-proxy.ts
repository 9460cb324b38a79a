// A loopback HTTP proxy in front of the platform that fails on purpose: per request (its plan), pass
// it on, answer 503, or drop the connection. For the SDK's retry rules, with real connections.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyPlan = (request: IncomingMessage, n: number) => 'pass' | 'fail' | 'drop';

export interface FaultyProxy {
  url: string;
  /** Every request that reached the proxy, in order. */
  seen: { method: string; path: string }[];
  /** Asked for each request (`n` counts from 1); change it between steps of a test. */
  plan: ProxyPlan;
  close(): Promise<void>;
}

export async function startFaultyProxy(target: string, plan: ProxyPlan = () => 'pass'): Promise<FaultyProxy> {
  const proxy: FaultyProxy = { url: '', seen: [], plan, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      proxy.seen.push({ method: req.method!, path: req.url! });
      const action = proxy.plan(req, proxy.seen.length);
      if (action === 'drop') return req.socket.destroy();
      if (action === 'fail') return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"try later"}');
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
      const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const body = Buffer.from(await upstream.arrayBuffer());
      const out: Record<string, string> = {};
      upstream.headers.forEach((v, k) => {
        if (!['content-encoding', 'transfer-encoding', 'connection', 'content-length'].includes(k)) out[k] = v;
      });
      res.writeHead(upstream.status, out).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return proxy;
}
