// An app's GDPR endpoint written as the SDK's README shows it (receiveNodeRequest, sendRefusal), for
// tests that send it deliveries, genuine or replayed. `handled` is what its handler acted on.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { receiveNodeRequest, sendRefusal, type WebhookMessage } from '../../packages/app-sdk/src/index.js';

/** Servers a test file started, closed after each test (call from the file's top level). */
export function closedAfterEach(): Server[] {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise((resolve) => s.close(resolve));
    }));
  });
  return servers;
}

export async function gdprEndpoint(servers: Server[], secret: string): Promise<{ url: string; handled: WebhookMessage[] }> {
  const handled: WebhookMessage[] = [];
  const server = createServer(async (req, res) => {
    const message = await receiveNodeRequest(req, { secret });
    if (!message.ok) return sendRefusal(res, message);
    handled.push(message);
    res.writeHead(200).end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/gdpr`, handled };
}
