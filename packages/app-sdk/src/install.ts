// Installing (C4): the platform sends the merchant's browser to the app's `/auth` with a signed
// handoff (C4.2); the app checks it, exchanges the code for tokens (C4.4) and keeps them fresh
// (C4.5). A refresh token is single use, and presenting a rotated one revokes every token of the
// installation (reuse detection), so refreshes of one installation are single-flight: concurrent
// callers share one refresh and its result.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { assertSecret } from './signatures.js';
import type { TokenStore } from './token-stores.js';
export { MemoryTokenStore, FileTokenStore, type TokenStore } from './token-stores.js';

/** How old a handoff may be (its `timestamp`): the code itself lives 10 minutes (C4.3). */
export const HANDOFF_MAX_AGE_SECONDS = 600;

export type Handoff = { ok: true; code: string; shop: string; state: string; timestamp: number } | { ok: false; reason: string };

/** C4.2: `hmac` over every other parameter, sorted, `name=value` (decoded), joined with `&`. */
export function verifyHandoff(query: URLSearchParams | string, clientSecret: string, options: { now?: Date; maxAgeSeconds?: number } = {}): Handoff {
  assertSecret(clientSecret, 'clientSecret');
  const params = typeof query === 'string' ? new URLSearchParams(query.startsWith('?') ? query.slice(1) : query) : query;
  const entries = [...params.entries()];
  const hmac = params.get('hmac');
  if (!hmac) return { ok: false, reason: 'missing hmac' };
  if (new Set(entries.map(([k]) => k)).size !== entries.length) return { ok: false, reason: 'a parameter is repeated' };
  const message = entries.filter(([k]) => k !== 'hmac').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join('&');
  const expected = Buffer.from(createHmac('sha256', clientSecret).update(message).digest('hex'));
  const given = Buffer.from(hmac);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad hmac' };
  const [code, shop, state, timestamp] = ['code', 'shop', 'state', 'timestamp'].map((k) => params.get(k));
  if (!code || !shop || !state || !timestamp || !/^\d+$/.test(timestamp)) return { ok: false, reason: 'missing code, shop, state or timestamp' };
  const age = Math.floor((options.now ?? new Date()).getTime() / 1000) - Number(timestamp);
  if (age > (options.maxAgeSeconds ?? HANDOFF_MAX_AGE_SECONDS) || age < -60) return { ok: false, reason: 'stale timestamp' };
  return { ok: true, code, shop, state, timestamp: Number(timestamp) };
}

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** When the access token stops working (ms since the epoch). */
  accessExpiresAt: number;
  /** When the 30-day grant ends: then the merchant must install again (C4.5). */
  refreshExpiresAt: number;
  scopes: string[];
  /**
   * The hash of the authorization code these tokens (or those they were refreshed from) were
   * exchanged for (`exchangeCode`), kept with them so that the same handoff seen again, even by
   * another process or after a restart, is not exchanged twice (`TokenKeeper.installFromHandoff`).
   */
  codeSha256?: string;
}

export interface AppCredentials {
  /** The platform's base URL, e.g. `http://localhost:3000`. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /**
   * How long a token request (code exchange, refresh) may take before it fails: TOKEN_REQUEST_TIMEOUT_MS
   * unless given. A refresh holds the token store's lock while it waits, so a platform that never
   * answers would otherwise hold off every other refresh of the store for good. (A refresh that
   * timed out may still have been carried out: then its refresh token is spent, C4.5.)
   */
  tokenTimeoutMs?: number;
}

export const TOKEN_REQUEST_TIMEOUT_MS = 30_000;

export class PlatformError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * Refuses a `baseUrl` that is not the platform's http(s) URL (`localhost:3000`, a blank
 * PLATFORM_URL), which would otherwise fail later with undici's bare "fetch failed" or "Invalid URL".
 * `who` begins the message (the function the app called).
 */
export function assertPlatformUrl(baseUrl: string | undefined, who: string): void {
  if (!/^https?:\/\/[^/]/i.test(baseUrl ?? '')) {
    throw new TypeError(`${who}baseUrl must be the platform's http(s) URL, e.g. http://localhost:3000 (got ${JSON.stringify(baseUrl)})`);
  }
}

async function tokenRequest(app: AppCredentials, body: Record<string, string>, now: () => number): Promise<Tokens> {
  // A wrong PLATFORM_URL failed the install with undici's bare "fetch failed" (or "Invalid URL"):
  // these errors name the address (never the secret) and the cause.
  assertPlatformUrl(app.baseUrl, '');
  const url = `${app.baseUrl.replace(/\/+$/, '')}/apps/oauth/token`;
  // The deadline covers the answer's body too: a platform that sends headers and then stalls holds the lock as long.
  const timeoutMs = app.tokenTimeoutMs ?? TOKEN_REQUEST_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut = (err: unknown) => new Error(`the platform at ${url} did not answer within ${timeoutMs} ms`, { cause: err });
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, ...body }),
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw timedOut(err);
    const cause = (err as { cause?: { message?: string; code?: string } }).cause;
    throw new Error(`could not reach the platform at ${url}: ${cause?.message || cause?.code || (err as Error).message}`, { cause: err });
  }
  const json = (await res.json().catch((err: unknown) => {
    if (signal.aborted) throw timedOut(err);
    return null;
  })) as { message?: string; data?: Record<string, any> } | null;
  if (json === null) throw new PlatformError(res.status, `${url} answered ${res.status} with a body that is not JSON: is baseUrl the platform's URL?`);
  if (res.status !== 200 || !json?.data) throw new PlatformError(res.status, json?.message ?? `token request failed (${res.status})`);
  const d = json.data;
  const at = now();
  return {
    accessToken: d.access_token,
    refreshToken: d.refresh_token,
    accessExpiresAt: at + d.expires_in * 1000,
    refreshExpiresAt: at + d.refresh_token_expires_in * 1000,
    scopes: String(d.scope ?? '').split(',').filter(Boolean),
  };
}

/**
 * The code of a handoff this process has already exchanged (C4.4): a reload of the app's `/auth`
 * page, the browser's back button or a link preview brings the same handoff again within its 10
 * minutes. It is not sent: the platform takes a code presented a second time as stolen and revokes
 * the tokens issued from it, which the app has just saved. The app answers as for the first time
 * (its tokens are those of the first exchange).
 */
export class CodeAlreadyExchangedError extends Error {
  constructor() {
    super('this authorization code was already exchanged: the installation keeps the tokens it got then');
    this.name = 'CodeAlreadyExchangedError';
  }
}

/**
 * The exchanges of this process, by a hash of their code, for the code's life (C4.3) and a margin:
 * `done` once the platform gave tokens for it. A failed exchange is forgotten, so the same handoff
 * may try again (the platform gave this process no tokens from it to lose).
 */
const exchanges = new Map<string, { until: number; done: boolean; tokens: Promise<Tokens> }>();
const MAX_REMEMBERED_CODES = 10_000;

/**
 * C4.4: the handoff's code for the installation's first tokens, sent once per process. The same
 * code while its exchange runs (a double click) shares that exchange; after it succeeded (a reload
 * of the page) it is a `CodeAlreadyExchangedError` and nothing is sent. An app of several processes
 * that may each receive the same handoff keeps the codes it exchanged in a store they share.
 */
export function exchangeCode(app: AppCredentials, handoff: { code: string; state: string }, now: () => number = Date.now): Promise<Tokens> {
  const at = now();
  for (const [hash, e] of exchanges) {
    if (e.until > at && exchanges.size <= MAX_REMEMBERED_CODES) break;
    exchanges.delete(hash); // the oldest first (a Map keeps insertion order)
  }
  const hash = createHash('sha256').update(handoff.code).digest('base64url');
  const known = exchanges.get(hash);
  if (known) return known.done ? Promise.reject(new CodeAlreadyExchangedError()) : known.tokens;
  const entry = { until: at + HANDOFF_MAX_AGE_SECONDS * 1000 + 60_000, done: false, tokens: null as unknown as Promise<Tokens> };
  entry.tokens = tokenRequest(app, { grant_type: 'authorization_code', code: handoff.code, state: handoff.state }, now).then(
    (tokens) => {
      entry.done = true;
      return { ...tokens, codeSha256: hash };
    },
    (err: unknown) => {
      if (exchanges.get(hash) === entry) exchanges.delete(hash);
      throw err;
    },
  );
  exchanges.set(hash, entry);
  return entry.tokens;
}

/** C4.5: new tokens for the refresh token (which is used up). Prefer `TokenKeeper`, which never presents one twice. */
export function refreshTokens(app: AppCredentials, refreshToken: string, now: () => number = Date.now): Promise<Tokens> {
  return tokenRequest(app, { grant_type: 'refresh_token', refresh_token: refreshToken }, now);
}

/** The tokens of a store this keeper has no tokens for: never installed, or forgotten. */
const notInstalled = (shop: string) => new Error(`no tokens for ${shop}: the app is not installed there`);

/**
 * A store's access token, refreshed when it is about to expire (`marginMs` before): one refresh at a
 * time per store, shared by every caller waiting for it, and saved before anyone uses it.
 *
 * `forget` and `install` win over anything already running for the store: each starts a new
 * generation of the store's tokens, and a refresh (or a save of unsaved tokens) begun in an older
 * one saves nothing and returns nothing. Otherwise a refresh in flight when the app forgot the store
 * would save tokens again for a store it had just let go.
 */
export class TokenKeeper {
  private readonly inFlight = new Map<string, Promise<Tokens>>();
  /**
   * Tokens a refresh obtained that the store failed to save. The platform has already rotated the
   * refresh token (C4.5): presenting the saved, older one again would be taken as reuse and revoke
   * the installation. So they are used from here, and saved again on each use until it succeeds.
   */
  private readonly unsaved = new Map<string, Tokens>();
  /** Per store, bumped by `forget` and `install`: work begun under an older number is stale. */
  private readonly generation = new Map<string, number>();
  /** Per store, the saves under way, which `forget` lets finish before it deletes. */
  private readonly saving = new Map<string, Set<Promise<void>>>();
  /**
   * Per store, the `install` or `forget` under way (settled, never rejected). A call begun meanwhile
   * waits for it before reading the store: until then the store still holds the tokens being
   * replaced or forgotten, and refreshing with those presents a refresh token an older refresh may
   * have spent (C4.5: the platform then revokes the installation) or saves again for a store let go.
   */
  private readonly changing = new Map<string, Promise<void>>();

  constructor(
    private readonly app: AppCredentials,
    private readonly store: TokenStore,
    private readonly options: { marginMs?: number; now?: () => number } = {},
  ) {}

  private generationOf(shop: string): number {
    return this.generation.get(shop) ?? 0;
  }

  /** Starts a new generation for the store: what runs for it now is stale, and no later call joins it. */
  private newGeneration(shop: string): void {
    this.generation.set(shop, this.generationOf(shop) + 1);
    this.inFlight.delete(shop);
    this.unsaved.delete(shop);
  }

  /** Saves tokens got in generation `gen`, unless the store was forgotten or installed again since. */
  private async save(shop: string, tokens: Tokens, gen: number): Promise<void> {
    if (this.generationOf(shop) !== gen) throw notInstalled(shop);
    const write = this.store.set(shop, tokens);
    const tracked = write.catch(() => undefined);
    const writes = this.saving.get(shop) ?? new Set<Promise<void>>();
    this.saving.set(shop, writes.add(tracked));
    try {
      await write;
    } finally {
      writes.delete(tracked);
      if (writes.size === 0 && this.saving.get(shop) === writes) this.saving.delete(shop);
    }
    if (this.generationOf(shop) !== gen) throw notInstalled(shop); // forgotten while saving: forget deletes after this write
  }

  /** Waits for the store's writes already under way (their failures are their callers'). */
  private async settled(shop: string): Promise<void> {
    await Promise.all(this.saving.get(shop) ?? []);
  }

  /** Runs `work` (an install's save, a forget's delete) after the store's previous one, as `changing`. */
  private async change(shop: string, work: () => Promise<void>): Promise<void> {
    const done = (this.changing.get(shop) ?? Promise.resolve()).then(work);
    const mark = done.then(() => undefined, () => undefined);
    this.changing.set(shop, mark);
    try {
      await done;
    } finally {
      if (this.changing.get(shop) === mark) this.changing.delete(shop);
    }
  }

  /**
   * Saves the first tokens of an installation (after `exchangeCode`). When the save fails the caller
   * gets the error, and the tokens are kept as a failed refresh's are (`unsaved`): their code is
   * spent (C4.4), so the platform gives them no second time, and a reload of the app's `/auth` page
   * is a `CodeAlreadyExchangedError` that the app answers as installed.
   */
  async install(shop: string, tokens: Tokens): Promise<void> {
    this.newGeneration(shop);
    const gen = this.generationOf(shop);
    await this.change(shop, async () => {
      try {
        await this.settled(shop); // an older write must not land over these tokens
        await this.save(shop, tokens, gen);
      } catch (err) {
        if (this.generationOf(shop) === gen) this.unsaved.set(shop, tokens);
        throw err;
      }
    });
  }

  /**
   * The install step of an app's `/auth` (after `verifyHandoff`): the handoff's code exchanged
   * (C4.4) and its tokens saved, once for all the keepers sharing the store. A handoff whose code
   * gave the tokens the store holds (a reload of the page, in this process or another, or after the
   * app restarted within the code's 10 minutes) rejects with `CodeAlreadyExchangedError` and sends
   * nothing: the platform takes a code presented twice as stolen and revokes the tokens it gave.
   * The app answers it as installed.
   */
  async installFromHandoff(handoff: { shop: string; code: string; state: string }): Promise<Tokens> {
    const codeSha256 = createHash('sha256').update(handoff.code).digest('base64url');
    return this.locked(handoff.shop, async () => {
      const stored = await this.current(handoff.shop, this.generationOf(handoff.shop));
      if (stored?.codeSha256 === codeSha256) throw new CodeAlreadyExchangedError();
      const tokens = await exchangeCode(this.app, handoff, this.options.now);
      await this.install(handoff.shop, tokens);
      return tokens;
    });
  }

  /**
   * Forgets a store (once the app is uninstalled there: the platform has no uninstall topic, so when
   * its refresh is refused, or `shop/redact` once completed): its tokens are
   * deleted, and a refresh still in flight for it saves and returns nothing (it fails as for a store
   * never installed); a later call starts afresh.
   */
  async forget(shop: string): Promise<void> {
    this.newGeneration(shop);
    await this.change(shop, async () => {
      await this.settled(shop); // writes already sent to the store land before the delete, not after
      await this.store.delete(shop);
    });
  }

  /** The store's tokens: those a failed save left in memory first (saved again now), else the store's. */
  private async current(shop: string, gen: number): Promise<Tokens | null> {
    await this.changing.get(shop); // an install or forget under way: what it leaves, not what it replaces
    if (this.generationOf(shop) !== gen) return null;
    const unsaved = this.unsaved.get(shop);
    const tokens = unsaved ? unsaved : await this.store.get(shop);
    if (this.generationOf(shop) !== gen) return null; // forgotten (or installed again) while reading
    if (!unsaved) return tokens;
    try {
      await this.save(shop, unsaved, gen);
      if (this.unsaved.get(shop) === unsaved) this.unsaved.delete(shop);
    } catch {
      // Still not saved (or forgotten meanwhile, checked below): they stay in memory for this call.
    }
    return this.generationOf(shop) === gen ? unsaved : null;
  }

  /**
   * Whether the keeper holds tokens for the store (installed, not forgotten), asking the platform
   * nothing: an app can decline work for a store it could not finish (a rate it could not ship).
   */
  async installed(shop: string): Promise<boolean> {
    return (await this.current(shop, this.generationOf(shop))) !== null;
  }

  async accessToken(shop: string): Promise<string> {
    const tokens = await this.current(shop, this.generationOf(shop));
    if (!tokens) throw notInstalled(shop);
    if (this.fresh(tokens)) return tokens.accessToken;
    return (await this.refreshFrom(shop, tokens)).accessToken;
  }

  private fresh(tokens: Tokens): boolean {
    return tokens.accessExpiresAt - (this.options.marginMs ?? 60_000) > (this.options.now ?? Date.now)();
  }

  /** The store's `lock` for the shop when it has one (see `TokenStore.lock`). */
  private locked<T>(shop: string, work: () => Promise<T>): Promise<T> {
    return this.store.lock ? this.store.lock(shop, work) : work();
  }

  /**
   * Refreshes now (single-flight per store, and under the store's `lock` across keepers): e.g.
   * after a 401 on a token that should still live. When another keeper refreshed while this one
   * waited for the lock, its tokens (saved in the store) are the answer, and nothing is sent.
   */
  refresh(shop: string): Promise<Tokens> {
    return this.refreshFrom(shop);
  }
  /** `stale`: the expired tokens the caller read (read again here, another keeper's new ones looked unchanged and were refreshed twice). */
  private refreshFrom(shop: string, stale?: Tokens): Promise<Tokens> {
    const running = this.inFlight.get(shop);
    if (running) return running;
    const gen = this.generationOf(shop);
    const job = (async () => {
      const seen = stale ?? (await this.current(shop, gen));
      if (!seen) throw notInstalled(shop);
      return this.locked(shop, () => this.refreshLocked(shop, gen, seen));
    })().finally(() => {
      if (this.inFlight.get(shop) === job) this.inFlight.delete(shop);
    });
    this.inFlight.set(shop, job);
    return job;
  }

  private async refreshLocked(shop: string, gen: number, seen: Tokens): Promise<Tokens> {
    const current = await this.current(shop, gen);
    if (!current) throw notInstalled(shop);
    // Another keeper refreshed (and saved) since `seen` was read: its refresh token is the live one,
    // `seen`'s is spent. Its access token is used as it is, unless it is itself about to expire.
    if (current.refreshToken !== seen.refreshToken && this.fresh(current)) return current;
    const refreshed = await refreshTokens(this.app, current.refreshToken, this.options.now);
    // Still the installation of that code: a reload of its handoff within 10 minutes stays a reload.
    const next = current.codeSha256 ? { ...refreshed, codeSha256: current.codeSha256 } : refreshed;
    try {
      await this.save(shop, next, gen);
      this.unsaved.delete(shop);
    } catch (err) {
      // The caller sees the failure; the new tokens are kept (see `unsaved`), not lost, unless
      // the store was forgotten or installed again meanwhile: then they belong to nobody.
      if (this.generationOf(shop) === gen) this.unsaved.set(shop, next);
      throw err;
    }
    return next;
  }
}
