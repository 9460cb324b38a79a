// A token request to a platform that never answers waited for good, and a TokenKeeper's refresh
// waits under the token store's lock (C4.5: one refresh at a time): every other keeper of the store,
// in every process sharing its token file, waited with it. Token requests now have a deadline.
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/temp-dirs.js';
import { FileTokenStore, TOKEN_REQUEST_TIMEOUT_MS, TokenKeeper, exchangeCode, refreshTokens } from '../packages/app-sdk/src/index.js';
import { withLockFile } from '../packages/app-sdk/src/locks.js';

/** A "platform" that accepts connections and reads the request, then answers nothing (or only its headers). */
async function stalled(headersOnly: boolean): Promise<{ server: Server; url: string }> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => {
      if (headersOnly) socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"data":');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}` };
}

let silent: { server: Server; url: string };
let halfway: { server: Server; url: string };
beforeAll(async () => {
  [silent, halfway] = await Promise.all([stalled(false), stalled(true)]);
});
afterAll(() => {
  for (const s of [silent, halfway]) s?.server.close();
});

const creds = (baseUrl: string) => ({ baseUrl, clientId: 'app', clientSecret: 'secret-of-the-app', tokenTimeoutMs: 300 });

describe('token requests have a deadline', () => {
  it('is 30 s unless the app gives another', () => {
    expect(TOKEN_REQUEST_TIMEOUT_MS).toBe(30_000);
  });

  it.each([
    ['a platform that never answers', () => silent.url],
    ['a platform that sends its headers and then stalls', () => halfway.url],
  ])('%s: the refresh and the code exchange fail within the deadline, naming the address', async (_name, url) => {
    const started = Date.now();
    const refresh = refreshTokens(creds(url()), 'a-refresh-token');
    await expect(refresh).rejects.toThrow(`the platform at ${url()}/apps/oauth/token did not answer within 300 ms`);
    await expect(exchangeCode(creds(url()), { code: `code-${Math.random()}`, state: 's' })).rejects.toThrow('did not answer within 300 ms');
    expect(Date.now() - started).toBeLessThan(5000);
  }, 10_000);

  it('a keeper whose refresh times out lets go of the token file\'s lock', async () => {
    const path = join(tempDir('svc-sdk-timeout-'), 'tokens.json');
    const store = new FileTokenStore(path);
    const expired = { accessToken: 'a', refreshToken: 'r', accessExpiresAt: Date.now() - 1000, refreshExpiresAt: Date.now() + 86400_000, scopes: [] };
    await store.set('demo-store', expired);
    await expect(new TokenKeeper(creds(silent.url), store).accessToken('demo-store')).rejects.toThrow('did not answer within 300 ms');
    // Another process's keeper gets the lock at once, not after the lock went stale.
    const started = Date.now();
    await withLockFile(`${path}.lock`, async () => undefined);
    expect(Date.now() - started).toBeLessThan(1000);
  }, 10_000);
});
