// The SDK's default body bound (packages/app-sdk/src/adapters.ts DEFAULT_MAX_BODY_BYTES) must take
// every webhook body the platform can send: a resource made from a request of up to the platform's
// 1 MiB (src/http/input-guard.ts MAX_BODY_BYTES), plus what the platform adds. Found in review: at
// 1 MiB, an order event just over it was answered 413, which the platform does not retry.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyTooLargeError, DEFAULT_MAX_BODY_BYTES, readNodeRequest } from '../packages/app-sdk/src/index.js';
import { MAX_BODY_BYTES } from '../src/http/input-guard.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

async function reader(): Promise<string> {
  server = createServer((req, res) => {
    readNodeRequest(req).then(
      (raw) => res.end(String(raw.rawBody.length)),
      (err) => res.writeHead(err instanceof BodyTooLargeError ? 413 : 500, { connection: 'close' }).end(String(err)),
    );
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/`;
}

describe('the SDK reads webhook bodies as large as the platform sends', () => {
  it('takes a body of several times the platform\'s request limit by default, and refuses one past its own bound', async () => {
    expect(DEFAULT_MAX_BODY_BYTES).toBeGreaterThanOrEqual(4 * MAX_BODY_BYTES);
    const url = await reader();
    const large = 'x'.repeat(MAX_BODY_BYTES + 512 * 1024);
    const taken = await fetch(url, { method: 'POST', body: large });
    expect(taken.status).toBe(200);
    expect(await taken.text()).toBe(String(large.length));
    const tooLarge = await fetch(url, { method: 'POST', body: 'x'.repeat(DEFAULT_MAX_BODY_BYTES + 1) });
    expect(tooLarge.status).toBe(413);
  });
});
