// The developer kit as an app developer meets it (packages/app-sdk, its CLI and examples): bugs
// found by following its documents literally.
// - FileTokenStore: one failed write (a full disk for a moment) left its write queue rejected, so
//   every later get and set of the process failed too, and a TokenKeeper on it could never serve or
//   refresh a token again until the app restarted.
// - TokenKeeper: when saving a refresh's tokens failed, they were dropped, and the next refresh
//   presented the refresh token the platform had already rotated: reuse detection (C4.5) revoked
//   the whole installation.
// - FileTokenStore: two instances of one file in one process (an app's /auth handler and its
//   worker) each had their own write queue: both wrote the same temporary file, one rename failed
//   (ENOENT), and one store's tokens were lost.
// - svc-app: an unknown option or a stray argument crashed (exit 1, no usage) where the README
//   promises exit 2 on a usage error; an unreachable or wrong --base printed only undici's bare
//   "fetch failed" or a JSON.parse error, naming neither the address nor the cause.
// - packages/app-sdk/examples: the run line in each example's header did not start it in this
//   repository (no built dist/ without `--conditions=svc-source`).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, listenOnLoopback, type Harness } from './helpers/harness.js';
import { signupPartner } from './helpers/actors.js';
import { freePort, ROOT } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { handoffFor, installedThroughSdk } from './helpers/sdk.js';
import { main } from '../packages/app-sdk/src/cli.js';
import { createAppClient, exchangeCode, FileTokenStore, MemoryTokenStore, refreshTokens, TokenKeeper, verifyHandoff, type Tokens } from '../packages/app-sdk/src/index.js';

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createHarness();
  base = await listenOnLoopback(h);
});
afterAll(async () => {
  await h?.close();
});

describe('FileTokenStore after a failed write', () => {
  it('the failure is the writer\'s alone: later reads, writes and a real refresh through a TokenKeeper still work', async () => {
    const { merchant, creds, tokens } = await installedThroughSdk(h, base, ['read_products']);

    const path = join(tempDir('svc-sdk-tokens-'), 'tokens.json');
    const store = new FileTokenStore(path);
    const keeper = new TokenKeeper(creds, store);
    await keeper.install(merchant.slug, tokens);

    // A write that fails: the token file cannot be read and replaced (a directory stands in its
    // place for a moment). The temporary file's name is random, so it can no longer be blocked.
    renameSync(path, `${path}.aside`);
    mkdirSync(path);
    const other: Tokens = { accessToken: 'a', refreshToken: 'r', accessExpiresAt: 1, refreshExpiresAt: 2, scopes: [] };
    await expect(store.set('other-store', other)).rejects.toMatchObject({ code: 'EISDIR' });
    rmdirSync(path);
    renameSync(`${path}.aside`, path);

    // The cause is gone: the store works again.
    expect(await store.get('other-store')).toBeNull();
    const installed = await store.get(merchant.slug);
    expect(installed?.accessToken).toMatch(/^svcat_/);
    const refreshed = await keeper.refresh(merchant.slug);
    expect(refreshed.accessToken).not.toBe(installed!.accessToken);
    expect(JSON.parse(readFileSync(path, 'utf8'))[merchant.slug].accessToken).toBe(refreshed.accessToken);
    const api = await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${await keeper.accessToken(merchant.slug)}` } });
    expect(api.status).toBe(200);
  });
});

describe('TokenKeeper when saving refreshed tokens fails', () => {
  /** A store whose next `set` fails, as a full disk or a lost database connection would. */
  class FlakyStore extends MemoryTokenStore {
    failNext = false;
    override async set(shop: string, tokens: Tokens) {
      if (this.failNext) {
        this.failNext = false;
        throw new Error('disk full');
      }
      await super.set(shop, tokens);
    }
  }

  it('keeps the new tokens: the caller sees the failure, the installation is not revoked (C4.5), and they are saved on the next use', async () => {
    const { merchant, creds, tokens } = await installedThroughSdk(h, base, ['read_products']);
    const store = new FlakyStore();
    const keeper = new TokenKeeper(creds, store);
    await keeper.install(merchant.slug, tokens);
    const installed = (await store.get(merchant.slug))!;

    store.failNext = true;
    await expect(keeper.refresh(merchant.slug)).rejects.toThrow('disk full');
    expect((await store.get(merchant.slug))!.refreshToken).toBe(installed.refreshToken);

    // The next refresh presents the rotated token, not the saved (already used) one.
    const again = await keeper.refresh(merchant.slug);
    const api = await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${again.accessToken}` } });
    expect(api.status).toBe(200);
    expect((await store.get(merchant.slug))!.accessToken).toBe(again.accessToken);

    // A failed save and then an ordinary call: served from memory, and saved by that call.
    store.failNext = true;
    await expect(keeper.refresh(merchant.slug)).rejects.toThrow('disk full');
    const token = await keeper.accessToken(merchant.slug);
    expect((await store.get(merchant.slug))!.accessToken).toBe(token);
    const served = await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${token}` } });
    expect(served.status).toBe(200);
  });
});

describe('TokenKeeper.forget while a refresh is in flight', () => {
  /** A store whose reads (or writes) wait at a gate the test opens, to hold a refresh mid-way. */
  class GatedStore extends MemoryTokenStore {
    gate: 'get' | 'set' | null = null;
    private open: () => void = () => {};
    reached: Promise<void> = Promise.resolve();
    private reachedNow: () => void = () => {};
    hold(on: 'get' | 'set') {
      this.gate = on;
      const wait = new Promise<void>((resolve) => (this.open = resolve));
      this.reached = new Promise<void>((resolve) => (this.reachedNow = resolve));
      return { release: () => this.open(), wait };
    }
    private async pass(on: 'get' | 'set', wait: Promise<void>) {
      if (this.gate !== on) return;
      this.gate = null;
      this.reachedNow();
      await wait;
    }
    current: Promise<void> = Promise.resolve();
    override async get(shop: string) {
      const tokens = await super.get(shop);
      await this.pass('get', this.current);
      return tokens;
    }
    override async set(shop: string, tokens: Tokens) {
      await this.pass('set', this.current);
      await super.set(shop, tokens);
    }
  }
  const held = (store: GatedStore, on: 'get' | 'set') => {
    const { release, wait } = store.hold(on);
    store.current = wait;
    return release;
  };

  /** An installation kept by a TokenKeeper over a store whose reads and writes a test can hold. */
  async function keeperOnGatedStore() {
    const installed = await installedThroughSdk(h, base, ['read_products']);
    const store = new GatedStore();
    const keeper = new TokenKeeper(installed.creds, store);
    await keeper.install(installed.merchant.slug, installed.tokens);
    return { ...installed, store, keeper };
  }

  it('forget wins: the refresh saves and returns nothing for the forgotten store, and a later call starts afresh', async () => {
    const { merchant, creds, tokens, store, keeper } = await keeperOnGatedStore();

    const release = held(store, 'get');
    const refreshing = keeper.refresh(merchant.slug).then((t) => t, (e: Error) => e);
    await store.reached; // the refresh has read the tokens it is about to present
    await keeper.forget(merchant.slug); // the app learns it was uninstalled
    // A call after forget does not join the refresh of the forgotten store.
    await expect(keeper.refresh(merchant.slug)).rejects.toThrow(/not installed/);
    release(); // the refresh goes on to the real platform, which rotates the tokens
    const outcome = await refreshing;
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/not installed/);
    expect(await store.get(merchant.slug)).toBeNull();
    await expect(keeper.accessToken(merchant.slug)).rejects.toThrow(/not installed/);
  });

  it('a save of refreshed tokens already under way lands before forget deletes, not after', async () => {
    const { merchant, app, creds, tokens, store, keeper } = await keeperOnGatedStore();

    const release = held(store, 'set');
    const refreshing = keeper.refresh(merchant.slug).then((t) => t, (e: Error) => e);
    await store.reached; // the platform answered; the keeper is writing the new tokens
    const forgetting = keeper.forget(merchant.slug);
    release();
    await forgetting;
    expect(await refreshing).toBeInstanceOf(Error);
    expect(await store.get(merchant.slug)).toBeNull();

    // Installed again on the same store: the same keeper serves and refreshes the new tokens.
    const handoff = verifyHandoff(await handoffFor(h, merchant, app), app.clientSecret);
    if (!handoff.ok) throw new Error(handoff.reason);
    await keeper.install(merchant.slug, await exchangeCode(creds, handoff));
    const refreshed = await keeper.refresh(merchant.slug);
    expect((await store.get(merchant.slug))?.accessToken).toBe(refreshed.accessToken);
    const api = await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${refreshed.accessToken}` } });
    expect(api.status).toBe(200);
  });

  it('install wins over a refresh of the tokens it replaces', async () => {
    const { store, keeper, ...first } = await keeperOnGatedStore();

    const release = held(store, 'get');
    const refreshing = keeper.refresh(first.merchant.slug).then((t) => t, (e: Error) => e);
    await store.reached;
    const replacement: Tokens = { ...first.tokens, accessToken: 'svcat_replacement', accessExpiresAt: Date.now() + 3_600_000 };
    await keeper.install(first.merchant.slug, replacement);
    release();
    expect(await refreshing).toBeInstanceOf(Error);
    expect((await store.get(first.merchant.slug))?.accessToken).toBe('svcat_replacement');
    expect(await keeper.accessToken(first.merchant.slug)).toBe('svcat_replacement');
  });

  // Found in review: a call made after forget or install began, while they waited for an older save
  // to land, read the store's old tokens under the new generation and refreshed with them: after a
  // forget it could save tokens again for the store let go; during a reinstall it presented a
  // refresh token the older refresh had already spent, and the platform's reuse detection (C4.5)
  // revoked the installation, the new tokens with it.
  it('a call made while install waits for an older save reads the installed tokens, not the ones they replace', async () => {
    const { merchant, app, creds, tokens, store, keeper } = await keeperOnGatedStore();

    const release = held(store, 'set');
    const refreshing = keeper.refresh(merchant.slug).then((t) => t, (e: Error) => e);
    await store.reached; // the platform rotated the tokens; the keeper is writing the new ones
    const handoff = verifyHandoff(await handoffFor(h, merchant, app), app.clientSecret);
    if (!handoff.ok) throw new Error(handoff.reason);
    const installing = keeper.install(merchant.slug, await exchangeCode(creds, handoff)); // waits for that write
    const during = keeper.refresh(merchant.slug).then((t) => t, (e: Error) => e);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the call has had time to read the store
    release();
    await installing;
    expect(await refreshing).toBeInstanceOf(Error); // begun before the install: saves nothing
    const got = await during;
    expect(got, String(got)).not.toBeInstanceOf(Error);
    expect((await store.get(merchant.slug))?.accessToken).toBe((got as Tokens).accessToken);
    const api = await fetch(`${base}/api/v1/products.json`, { headers: { authorization: `Bearer ${await keeper.accessToken(merchant.slug)}` } });
    expect(api.status).toBe(200);
  });

  it('a call made while forget waits for an older save finds the store forgotten', async () => {
    const { merchant, creds, tokens, store, keeper } = await keeperOnGatedStore();

    const release = held(store, 'set');
    const refreshing = keeper.refresh(merchant.slug).then((t) => t, (e: Error) => e);
    await store.reached;
    const forgetting = keeper.forget(merchant.slug);
    const during = keeper.refresh(merchant.slug).then((t) => t, (e: Error) => e);
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    await forgetting;
    expect(await refreshing).toBeInstanceOf(Error);
    const got = await during;
    expect(got).toBeInstanceOf(Error);
    expect((got as Error).message).toMatch(/not installed/);
    expect(await store.get(merchant.slug)).toBeNull();
  });
});

describe('svc-app: usage errors and unhelpful failures', () => {
  const capture = () => {
    const lines: string[] = [];
    return { lines, out: (l: string) => void lines.push(l) };
  };

  it('an unknown option or a stray argument is a usage error: exit 2 and the usage, as for a missing option', async () => {
    for (const argv of [
      ['function', 'run', '--target', 'cart.validations.generate.run', '--expr', 'x.cel', '--input', 'i.json'],
      ['webhook', 'verify', '--secret', 's', '--request', 'r.json', 'extra'],
    ]) {
      const { lines, out } = capture();
      expect(await main(argv, () => {}, out), argv.join(' ')).toBe(2);
      expect(lines.join('\n')).toContain('usage:');
    }
    const { lines, out } = capture();
    expect(await main(['function', 'run', '--target', 'cart.validations.generate.run', '--expr', 'x.cel'], () => {}, out)).toBe(2);
    expect(lines.join('\n')).toMatch(/Unknown option '--expr'/);
  });

  it('--base that is not an http(s) URL is a usage error', async () => {
    const { lines, out } = capture();
    const code = await main(['webhook', 'trigger', '--base', 'localhost:3000', '--token', 't', '--app', 'a', '--topic', 'orders/create', '--address', 'http://x'], () => {}, out);
    expect(code).toBe(2);
    expect(lines.join('\n')).toContain('--base must be');
  });

  it('a platform that cannot be reached: the error names the address and the cause, never the token', async () => {
    const port = await freePort(); // nothing listens there
    const token = 'eyJsecret.developer.jwt';
    const err = await main(['webhook', 'trigger', '--base', `http://127.0.0.1:${port}`, '--token', token, '--app', 'a1', '--topic', 'orders/create', '--address', 'http://x'], () => {})
      .then(() => null, (e: Error) => e);
    expect(err?.message).toContain(`http://127.0.0.1:${port}/apps/developer/a1/webhooks/test`);
    expect(err?.message).toContain('ECONNREFUSED');
    expect(err?.message).not.toContain(token);
    const replay = await main(['function', 'replay', '--base', `http://127.0.0.1:${port}/`, '--token', token, '--app', 'a1', '--handle', 'h', '--run', 'r'], () => {})
      .then(() => null, (e: Error) => e);
    expect(replay?.message).toMatch(/could not reach the platform at http:\/\/127\.0\.0\.1:\d+\/apps\/developer\/a1\/functions\/h\/runs\/r\/replay: .*ECONNREFUSED/);
  });

  it('an address that is not the platform (answers HTML): the error says what answered, not a JSON.parse message', async () => {
    const server = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<!DOCTYPE html><p>not here</p>'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const err = await main(['webhook', 'trigger', '--base', url, '--token', 't', '--app', 'a1', '--topic', 'orders/create', '--address', 'http://x'], () => {})
        .then(() => null, (e: Error) => e);
      expect(err?.message).toBe(`${url}/apps/developer/a1/webhooks/test answered 404 with a body that is not JSON: is --base the platform's URL?`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('exchangeCode and refreshTokens with a wrong platform URL: the error names the address and the cause, never the secret', async () => {
    const secret = 'svcsk_never-printed';
    const port = await freePort(); // nothing listens there
    const unreachable = { baseUrl: `http://127.0.0.1:${port}/`, clientId: 'svcapp_x', clientSecret: secret };
    const err = (await exchangeCode(unreachable, { code: `svccode_${port}`, state: 's' }).then(() => null, (e: Error) => e))!;
    expect(err.message).toMatch(new RegExp(`^could not reach the platform at http://127\\.0\\.0\\.1:${port}/apps/oauth/token: .*ECONNREFUSED`));
    expect(err.message).not.toContain(secret);
    await expect(refreshTokens({ ...unreachable, baseUrl: 'localhost:3000' }, 'svcrt_x')).rejects.toThrow(`baseUrl must be the platform's http(s) URL, e.g. http://localhost:3000 (got "localhost:3000")`);
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!DOCTYPE html><p>an app</p>'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await expect(refreshTokens({ ...unreachable, baseUrl: url }, 'svcrt_x')).rejects.toThrow(`${url}/apps/oauth/token answered 200 with a body that is not JSON: is baseUrl the platform's URL?`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('against the real platform it still prints the platform\'s own refusal (exit 1)', async () => {
    const partner = await signupPartner(h);
    const { lines, out } = capture();
    const code = await main(['webhook', 'trigger', '--base', `${base}/`, '--token', partner.token, '--app', '00000000-0000-7000-8000-000000000000', '--topic', 'orders/create', '--address', 'http://x'], out);
    expect(code).toBe(1);
    expect(JSON.parse(lines.join('\n'))).toMatchObject({ state: 'error', status: 404 });
  });

  it('a saved request or input that is not JSON is named in the error', async () => {
    const dir = tempDir('svc-sdk-cli-');
    const file = join(dir, 'request.json');
    writeFileSync(file, 'not json');
    const err = await main(['webhook', 'verify', '--secret', 's', '--request', file], () => {}).then(() => null, (e: Error) => e);
    expect(err?.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not JSON: `));
  });
});

describe('packages/app-sdk/examples: the run line in each header works as written from the repository root', () => {
  for (const file of ['node-http.ts', 'fastify.ts']) {
    it(file, async () => {
      const source = readFileSync(join(ROOT, 'packages/app-sdk/examples', file), 'utf8');
      const line = /^\/\/\s+(CLIENT_SECRET=\.\.\. PORT=\d+ node .*)$/m.exec(source)?.[1];
      expect(line, 'the header shows how to run it').toBeDefined();
      const words = line!.split(/\s+/);
      const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
      while (/^[A-Z_]+=/.test(words[0])) {
        const [name, value] = words.shift()!.split('=');
        env[name] = value;
      }
      env.CLIENT_SECRET = 'example-secret';
      env.PORT = String(await freePort());
      expect(words[0]).toBe('node');
      const child = spawn(process.execPath, words.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c));
      child.stderr.on('data', (c: Buffer) => (output += c));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        const deadline = Date.now() + 30_000;
        let outcome = '';
        while (!outcome) {
          if (/listening on/.test(output)) outcome = 'listening';
          else if (child.exitCode !== null) outcome = `exited ${child.exitCode}: ${output}`;
          else if (Date.now() > deadline) outcome = `timeout: ${output}`;
          else await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(outcome).toBe('listening');
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill();
        await exited;
      }
    }, 40_000);
  }
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
