// SIGTERM while requests are in flight (README, "Run it, test it" and "Running at scale": it "finishes
// what is in flight and closes the database"): a real process, a request that is provably under way
// when the signal arrives (a webhook test delivery, waiting on a receiver of the test's own), and a
// restart that finds its writes. Embedded database only, as the README's `npm start`.
import { createServer, type Server } from 'node:http';
import { describe, expect, inject, it } from 'vitest';
import { freePort, startService } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';

const onPGlite = !inject('testDatabaseUrl');

describe.runIf(onPGlite)('graceful shutdown of a real process', () => {
  it('SIGTERM during a request: the request is answered in full, the process exits 0, the next start has its writes', async () => {
    const dataDir = tempDir('svc-rv-ops-shutdown-');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const svc = startService({ SVC_DATA_DIR: dataDir, PORT: String(port) });
    await svc.waitFor(/The whole install flow/, 120_000);

    const login = await (await fetch(`${base}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'partner@demo.test', password: 'demo-partner-pass' }),
    })).json();
    const partner = login.data.token;
    const apps = await (await fetch(`${base}/apps/developer/apps`, { headers: { authorization: `Bearer ${partner}` } })).json();
    const appId = apps.data.apps[0].appId;

    // A receiver that holds the delivery 1.5 s: the service's request is in flight all that time.
    let arrived!: () => void;
    const delivered = new Promise<void>((resolve) => (arrived = resolve));
    const receiver: Server = createServer((req, res) => {
      req.resume();
      arrived();
      setTimeout(() => res.writeHead(200).end('ok'), 1500);
    });
    const receiverPort = await freePort();
    await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', resolve));
    try {
      const answer = fetch(`${base}/apps/developer/${appId}/webhooks/test`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${partner}` },
        body: JSON.stringify({ topic: 'orders/create', address: `http://127.0.0.1:${receiverPort}/hooks` }),
      });
      await delivered;
      svc.child.kill('SIGTERM');
      const res = await answer;
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.data).toMatchObject({ outcome: { status: 'success', responseStatus: 200 } });
      expect(await svc.exited, svc.output()).toEqual({ code: 0, signal: null });
      expect(svc.output()).not.toMatch(/error|failed/i);

      // The delivery the answer reported was written before the database closed.
      const again = startService({ SVC_DATA_DIR: dataDir, PORT: String(port) });
      await again.waitFor(/process ready/, 120_000);
      const log = await (await fetch(`${base}/apps/developer/${appId}/webhook-deliveries`, { headers: { authorization: `Bearer ${partner}` } })).json();
      expect(JSON.stringify(log.data)).toContain(body.data.delivery.deliveryId);
      again.child.kill('SIGTERM');
      expect((await again.exited).code).toBe(0);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  }, 240_000);
});
