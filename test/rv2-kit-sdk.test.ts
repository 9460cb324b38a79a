// The app SDK (packages/app-sdk) as an app developer uses it, against the real platform listening on
// loopback: bugs found by review and fixed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, listenOnLoopback, type Harness } from './helpers/harness.js';
import { installedThroughSdk } from './helpers/sdk.js';
import { tempDir } from './helpers/temp-dirs.js';
import { createAppClient, FileTokenStore, TokenKeeper } from '../packages/app-sdk/src/index.js';

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createHarness();
  base = await listenOnLoopback(h);
});
afterAll(async () => {
  await h?.close();
});

describe('FileTokenStore: two stores of one file in one process', () => {
  it('installs on two stores saved at once through two FileTokenStores of the same file both keep their tokens', async () => {
    const one = await installedThroughSdk(h, base, ['read_orders']);
    const two = await installedThroughSdk(h, base, ['read_orders']);
    const path = join(tempDir('rv2-kit-'), 'tokens.json');
    // As an app's /auth handler and its webhook worker might each make one (the README's
    // `new FileTokenStore('./tokens.json')`), or an app opening the store per request.
    await Promise.all([
      new TokenKeeper(one.creds, new FileTokenStore(path)).install(one.handoff.shop, one.tokens),
      new TokenKeeper(two.creds, new FileTokenStore(path)).install(two.handoff.shop, two.tokens),
    ]);
    expect(Object.keys(JSON.parse(readFileSync(path, 'utf8'))).sort()).toEqual([one.handoff.shop, two.handoff.shop].sort());
    for (const s of [one, two]) {
      const keeper = new TokenKeeper(s.creds, new FileTokenStore(path));
      const api = createAppClient({ baseUrl: base, tokenProvider: () => keeper.accessToken(s.handoff.shop) });
      const { response } = await api.GET('/api/v1/orders.json');
      expect(response.status).toBe(200);
    }
  });
});
