// Several TokenKeepers of one installation (two instances in an app, or two processes of it on one
// token file) whose access token expires at the same moment. Each refreshed on its own: the second
// presented the refresh token the first had just rotated, and the platform's reuse detection
// (C4.5) revoked the whole installation. Now a keeper refreshes under its store's `lock` after
// reading the store again, and takes the other keeper's new tokens instead of refreshing twice.
// The same for a handoff: a process that had not exchanged its code itself (another process, or
// the app restarted within the code's 10 minutes) sent it again on a reload of `/auth`, and the
// platform revoked the tokens the code gave (C4.4). The tokens now keep the code's hash.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, listenOnLoopback, type Harness } from './helpers/harness.js';
import { tempDir } from './helpers/temp-dirs.js';
import { runSdkProcess } from './helpers/sdk-process.js';
import { handoffFor, installedThroughSdk } from './helpers/sdk.js';
import { createTestApp, signupMerchant, signupPartner } from './helpers/actors.js';
import { FileTokenStore, MemoryTokenStore, TokenKeeper, type TokenStore } from '../packages/app-sdk/src/index.js';
import { withLockFile } from '../packages/app-sdk/src/locks.js';

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createHarness();
  base = await listenOnLoopback(h);
});
afterAll(() => h?.close());

/** The keepers' clock, a day and an hour ahead: every token they hold has expired for them. */
const later = () => Date.now() + 25 * 3600_000;

async function apiStatus(token: string): Promise<number> {
  return (await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${token}` } })).status;
}

/** An installation whose tokens are saved in `store`, and how many refreshes the platform answered. */
async function installedIn(store: TokenStore) {
  const s = await installedThroughSdk(h, base, ['read_products']);
  await new TokenKeeper(s.creds, store).install(s.handoff.shop, s.tokens);
  return s;
}

describe('two TokenKeepers of one store refresh an expired token at once (C4.5)', () => {
  it.each([
    ['one MemoryTokenStore', () => { const one = new MemoryTokenStore(); return () => one; }],
    ['two FileTokenStores of one file', () => { const path = join(tempDir('svc-sdk-shared-'), 'tokens.json'); return () => new FileTokenStore(path); }],
  ])('%s: one refresh, both keepers get its token, the installation keeps working', async (_name, storeFactory) => {
    const storeOf = storeFactory();
    const s = await installedIn(storeOf());
    const keepers = [new TokenKeeper(s.creds, storeOf(), { now: later }), new TokenKeeper(s.creds, storeOf(), { now: later })];
    const tokens = await Promise.all(keepers.map((k) => k.accessToken(s.handoff.shop)));
    expect(tokens[0]).not.toBe(s.tokens.accessToken);
    expect(tokens[1]).toBe(tokens[0]);
    expect(await apiStatus(tokens[0])).toBe(200);
    // Refreshing again later still works: the refresh token in the store is the live one.
    const again = await keepers[1].refresh(s.handoff.shop);
    expect(await apiStatus(again.accessToken)).toBe(200);
  });

  it("a keeper that read the expired tokens just before another keeper's refresh saved new ones takes those, and refreshes nothing", async () => {
    // Seen in CI: the second keeper read the store again when it began its refresh, found the new
    // tokens, took them for the ones it had found expired, and refreshed a second time.
    const shared = new MemoryTokenStore();
    const s = await installedIn(shared);
    const first = new TokenKeeper(s.creds, shared, { now: later });
    let firstToken: string | null = null;
    let between: (() => Promise<void>) | null = async () => {
      firstToken = await first.accessToken(s.handoff.shop);
    };
    // The second keeper's store: its first read answers the tokens as they were, after the first
    // keeper has refreshed and saved.
    const slow: TokenStore = {
      get: async (shop) => {
        const tokens = await shared.get(shop);
        const step = between;
        between = null;
        if (step) await step();
        return tokens;
      },
      set: (shop, tokens) => shared.set(shop, tokens),
      delete: (shop) => shared.delete(shop),
      lock: (shop, work) => shared.lock(shop, work),
    };
    const second = await new TokenKeeper(s.creds, slow, { now: later }).accessToken(s.handoff.shop);
    expect(firstToken).not.toBeNull();
    expect(second).toBe(firstToken);
    expect((await shared.get(s.handoff.shop))!.accessToken).toBe(firstToken);
    expect(await apiStatus(second)).toBe(200);
  });

  it('two processes on one token file: one refresh between them, and the installation keeps working', async () => {
    const path = join(tempDir('svc-sdk-procs-'), 'tokens.json');
    const s = await installedIn(new FileTokenStore(path));
    const at = Date.now() + 3000; // past both processes' start, even on a loaded machine
    const run = () => runSdkProcess(`
      const [path, shop, creds, at] = [process.argv[2], process.argv[3], JSON.parse(process.argv[4]), Number(process.argv[5])];
      const keeper = new sdk.TokenKeeper(creds, new sdk.FileTokenStore(path), { now: () => Date.now() + 25 * 3600_000 });
      await new Promise((r) => setTimeout(r, at - Date.now())); // both start their refresh at one instant
      process.stdout.write(await keeper.accessToken(shop));
    `, [path, s.handoff.shop, JSON.stringify(s.creds), String(at)]);
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.code, a.err).toBe(0);
    expect(b.code, b.err).toBe(0);
    expect(b.out).toBe(a.out);
    expect(JSON.parse(readFileSync(path, 'utf8'))[s.handoff.shop].accessToken).toBe(a.out);
    expect(await apiStatus(a.out)).toBe(200);
  });
});

describe('a handoff seen again by a process that did not exchange it (C4.4)', () => {
  it('after a restart (a new process on the token file), a reload of /auth sends nothing and the tokens keep working', async () => {
    const merchant = await signupMerchant(h);
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { scopes: ['read_products'] });
    const creds = { baseUrl: base, clientId: app.clientId, clientSecret: app.clientSecret };
    const query = (await handoffFor(h, merchant, app)).toString();
    const path = join(tempDir('svc-sdk-restart-'), 'tokens.json');
    // The app's /auth, as the example app runs it, in a process of its own each time.
    const auth = () => runSdkProcess(`
      const [path, creds, query] = [process.argv[2], JSON.parse(process.argv[3]), process.argv[4]];
      const handoff = sdk.verifyHandoff(query, creds.clientSecret);
      if (!handoff.ok) throw new Error(handoff.reason);
      const keeper = new sdk.TokenKeeper(creds, new sdk.FileTokenStore(path));
      try {
        await keeper.installFromHandoff(handoff);
        process.stdout.write('installed');
      } catch (err) {
        if (!(err instanceof sdk.CodeAlreadyExchangedError)) throw err;
        process.stdout.write('already installed');
      }
    `, [path, JSON.stringify(creds), query]);
    const first = await auth();
    expect(first.code, first.err).toBe(0);
    expect(first.out).toBe('installed');
    const saved = JSON.parse(readFileSync(path, 'utf8'))[merchant.slug];
    expect(saved.codeSha256).toMatch(/^[\w-]{43}$/);
    const reload = await auth();
    expect(reload.code, reload.err).toBe(0);
    expect(reload.out).toBe('already installed');
    expect(await apiStatus(saved.accessToken)).toBe(200);
    // Refreshed tokens keep the code's hash: a reload after a refresh is still a reload.
    const refreshed = await new TokenKeeper(creds, new FileTokenStore(path)).refresh(merchant.slug);
    expect(refreshed.codeSha256).toBe(saved.codeSha256);
    expect((await auth()).out).toBe('already installed');
    expect(await apiStatus(refreshed.accessToken)).toBe(200);
  });
});

describe('the lock file (withLockFile)', () => {
  it('holds other holders off until released, and a lock its dead holder left is taken over once stale', async () => {
    const lock = join(tempDir('svc-sdk-lock-'), 'tokens.json.lock');
    const order: string[] = [];
    let release!: () => void;
    const first = withLockFile(lock, async () => {
      order.push('first in');
      await new Promise<void>((r) => (release = r));
      order.push('first out');
    });
    while (!order.length) await new Promise((r) => setTimeout(r, 5));
    const second = withLockFile(lock, async () => void order.push('second in'));
    await new Promise((r) => setTimeout(r, 150));
    expect(order).toEqual(['first in']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second in']);

    // Left behind by a process that died holding it: taken over once older than the stale age.
    writeFileSync(lock, '999999\n');
    const started = Date.now();
    await withLockFile(lock, async () => undefined, 200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });
});
