// The App API client: openapi-fetch over the types generated from the committed OpenAPI document
// (docs/openapi.json -> generated/openapi.ts, `npm run sdk:types`), with what a well-behaved app
// needs around every request:
//
// - the bearer token, from a string or a provider asked before each attempt (e.g. a TokenKeeper);
// - the rate limit (app-api.md Limits: a sliding one-second window per app and store, reported in
//   `X-RateLimit-Limit`/`-Remaining`/`-Reset`, C5.5): the client keeps a local budget from those
//   headers and, when it is spent, waits until the reset instead of provoking a 429; a 429 still
//   met (another process sharing the budget) is waited out for `Retry-After` seconds and retried;
// - retries with exponential backoff and jitter for network errors and 5xx, only where a repeat is
//   harmless: GET, HEAD, OPTIONS, PUT and DELETE, and the two POSTs the platform documents as
//   harmless to repeat (acknowledging and completing a GDPR request, C9.2). The platform has no
//   idempotency key, so any other POST or PATCH is retried only when it cannot have reached the
//   server (connection refused, unknown host) or was refused by the rate limit before any work (429);
// - pages: `paginate` walks bare-body lists by their `Link: <...>; rel="next"` header (C5.4) and
//   envelope lists by their `pagination` (`page`/`totalPages`), `data.pagination` (`hasMore`) or flat
//   `data` counters (`total`/`page`/`limit`).
import createClient, { type Client, type MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { assertPlatformUrl, PlatformError } from './install.js';

export type { paths } from './generated/openapi.js';

type Fetch = (request: Request) => Promise<Response>;

export interface RetryOptions {
  /** Most sends of one request, the first included (default 4). */
  maxAttempts?: number;
  /** The first backoff (default 250 ms); it doubles at each retry, with jitter (half to all of it). */
  baseDelayMs?: number;
  /** The longest backoff (default 5 000 ms). */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the 429 is returned (default 60 s). */
  maxRetryAfterSeconds?: number;
}

export interface AppClientOptions {
  /** The platform's base URL, e.g. `http://localhost:3000` (paths such as `/api/v1/products.json` follow it). */
  baseUrl: string;
  /** A fixed access token. */
  accessToken?: string;
  /** Or a function giving the current access token, asked before every attempt: `() => keeper.accessToken(shop)`. */
  tokenProvider?: () => string | Promise<string>;
  /** The fetch to send with (default: the global fetch). */
  fetch?: Fetch;
  retry?: RetryOptions;
  /**
   * Stay under the App API's rate limit (default true): wait for the window's reset rather than
   * send a request the budget has no room for. `marginMs` is added to every such wait (default 50).
   */
  rateLimit?: { stayUnder?: boolean; marginMs?: number };
  /** Headers sent with every request (e.g. `X-SVC-Api-Version`). */
  headers?: Record<string, string>;
}

/** The rate limit as the client last saw it (app-api.md Limits headers). */
export interface RateLimitState {
  limit: number | null;
  /** The local estimate: the last reported remaining, less what was sent since. */
  remaining: number | null;
  /** Unix seconds when the window resets (`X-RateLimit-Reset`). */
  resetAt: number | null;
}

/** A non-2xx answer where the client needed a 2xx (paging, the GDPR helpers). */
export class ApiError extends PlatformError {
  constructor(status: number, message: string, readonly body: unknown) {
    super(status, message);
  }
}

/**
 * The sentence of an error body, for an `ApiError`'s message: the envelope's `message`, or the App
 * API's `{ errors: { base: [...], <field>: [...] } }` (app-api.md Errors) as "message; field: message"
 * rather than its JSON, or `fallback`.
 */
export function errorMessage(body: unknown, fallback: string): string {
  const b = body as { message?: unknown; errors?: unknown } | null;
  if (b && typeof b === 'object') {
    if (typeof b.message === 'string' && b.message) return b.message;
    if (typeof b.errors === 'string' && b.errors) return b.errors;
    if (b.errors && typeof b.errors === 'object') {
      const parts = Object.entries(b.errors).flatMap(([key, messages]) =>
        (Array.isArray(messages) ? messages : [messages]).map((m) => (key === 'base' ? String(m) : `${key}: ${String(m)}`)),
      );
      if (parts.length) return parts.join('; ');
    }
  }
  return fallback;
}

// ---------------------------------------------------------------------------------------------
// Typing of the paged lists

type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
type GetOperation<P extends GetPath> = paths[P] extends { get: infer O } ? O : never;
/** The body of a GET's 200 answer. */
export type OkBody<P extends GetPath> = GetOperation<P> extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
type ArrayElements<T> = { [K in keyof T]-?: NonNullable<T[K]> extends readonly (infer E)[] ? E : never }[keyof T];
/** What a list's page holds: the array of a bare body (`{ products }`) or of an envelope's `data`. */
export type ItemOf<B> = B extends { data: infer D } ? (NonNullable<D> extends readonly (infer E)[] ? E : ArrayElements<NonNullable<D>>) : ArrayElements<B>;

export interface Page<B> {
  body: B;
  items: ItemOf<B>[];
  response: Response;
}

export interface AppClient extends Client<paths> {
  /** Every item of a paged list, page after page (`Link` or envelope paging), in the platform's order. */
  paginate<P extends GetPath>(path: P, init?: MaybeOptionalInit<paths[P], 'get'>): AsyncIterableIterator<ItemOf<OkBody<P>>>;
  /** The pages themselves: each page's body, its items and its response. */
  pages<P extends GetPath>(path: P, init?: MaybeOptionalInit<paths[P], 'get'>): AsyncIterableIterator<Page<OkBody<P>>>;
  /** The rate limit as last reported (App API responses only). */
  readonly rateLimit: RateLimitState;
}

// ---------------------------------------------------------------------------------------------
// Waiting

class AbortedError extends Error {}

function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new AbortedError('aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason ?? new AbortedError('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The App API's rate-limit window (app-api.md Limits: a sliding one-second window). */
const RATE_WINDOW_MS = 1000;

/**
 * The local view of one (app, store) budget. Callers take a turn one at a time: with room left a
 * turn takes one unit; with none, it waits for the window's reset; when the room is unknown (before
 * the first answer, after a reset) one request goes alone and the others wait for its headers.
 */
class RateBudget {
  state: RateLimitState = { limit: null, remaining: null, resetAt: null };
  private inFlight = 0;
  /** How many requests took a turn: each one's number orders the sends. */
  private sent = 0;
  /** The number of the latest-sent request whose headers the state holds. */
  private applied = 0;
  private turns: Promise<number> = Promise.resolve(0);
  private waiters: Array<() => void> = [];

  constructor(private readonly marginMs: number) {}

  /** Waits for room and takes a unit; resolves to this send's number, for `done`. */
  take(signal?: AbortSignal | null): Promise<number> {
    const turn = this.turns.then(() => this.waitForRoom(signal));
    this.turns = turn.catch(() => 0);
    return turn;
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private async waitForRoom(signal?: AbortSignal | null): Promise<number> {
    for (;;) {
      const { remaining, resetAt } = this.state;
      if (remaining === null) {
        if (this.inFlight === 0) break;
        await this.changed();
        continue;
      }
      if (remaining > 0) {
        this.state.remaining = remaining - 1;
        break;
      }
      // Never more than the window (app-api.md Limits: one second, sliding): a reset further off
      // says that this machine's clock is behind the platform's, not that the window is longer, and
      // waiting for it would stall every call for as long as the clocks disagree.
      const wait = Math.min((resetAt ?? 0) * 1000 - Date.now(), RATE_WINDOW_MS) + this.marginMs;
      if (wait > 0) await sleep(wait, signal);
      // The window moved on: how much room it has is unknown until the next answer says.
      this.state.remaining = null;
    }
    this.inFlight++;
    return ++this.sent;
  }

  /** Request number `seq` ended (`headers` of its answer, or null when there was none). */
  done(seq: number, headers: Headers | null): void {
    this.inFlight--;
    const limit = headers?.get('x-ratelimit-limit');
    const remaining = headers?.get('x-ratelimit-remaining');
    const reset = headers?.get('x-ratelimit-reset');
    // Answers come back in any order: one sent before a request whose headers the state already
    // holds says less than they did (the platform recorded it before that one, and that one's
    // answer counted it, in flight then). Taken last, it gave back room the window no longer had,
    // and the next requests met 429s.
    if (seq > this.applied && limit != null && remaining != null && reset != null && Number.isFinite(Number(remaining))) {
      this.applied = seq;
      // Requests still in flight may have been counted after this one: assume they were.
      this.state = { limit: Number(limit), remaining: Math.max(0, Number(remaining) - this.inFlight), resetAt: Number(reset) };
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

// ---------------------------------------------------------------------------------------------
// Sending: token, budget, retries

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/**
 * The POSTs the platform documents as harmless to repeat, sent again as a PUT is: an app's
 * acknowledgment and completion of a GDPR request (C9.2; the service's `appGdprAction`). Their
 * webhooks are never delivered again (C9.4), so one transient 503 or cut connection left the request
 * pending until its deadline failed the app. Matched at the end of the path (a base URL may have one).
 */
const IDEMPOTENT_POST = /\/apps\/gdpr\/(?:acknowledge|complete)\/[^/]+$/;
/** Errors raised before a byte of the request left: any method may be sent again. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const visit = (e: any, depth: number) => {
    if (!e || typeof e !== 'object' || depth > 4) return;
    if (typeof e.code === 'string') codes.push(e.code);
    visit(e.cause, depth + 1);
    if (Array.isArray(e.errors)) for (const inner of e.errors) visit(inner, depth + 1);
  };
  visit(err, 0);
  return codes;
}

function neverSent(err: unknown): boolean {
  const codes = errorCodes(err);
  return codes.length > 0 && codes.every((c) => NOT_SENT_CODES.has(c));
}

function isAbort(err: unknown, signal: AbortSignal | null): boolean {
  return Boolean(signal?.aborted) || err instanceof AbortedError || (err instanceof Error && err.name === 'AbortError');
}

/**
 * `Retry-After` in seconds: delay-seconds (a fraction too, as some proxies send it) or an HTTP date
 * (RFC 9110), else null. Only a value with a month or day name is read as a date: `Date.parse`
 * takes "90.5" for a day in 2001, which made a 90.5 s wait none at all.
 */
function retryAfterSeconds(res: Response): number | null {
  const value = res.headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  if (!/[a-z]{3}/i.test(value)) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}

function makeSender(options: AppClientOptions, budget: RateBudget): Fetch {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const maxAttempts = Math.max(1, options.retry?.maxAttempts ?? 4);
  const baseDelay = options.retry?.baseDelayMs ?? 250;
  const maxDelay = options.retry?.maxDelayMs ?? 5000;
  const maxRetryAfter = options.retry?.maxRetryAfterSeconds ?? 60;
  const stayUnder = options.rateLimit?.stayUnder ?? true;
  const backoff = (retry: number) => Math.min(maxDelay, baseDelay * 2 ** retry) * (0.5 + Math.random() / 2);
  const token = async () => options.accessToken ?? (options.tokenProvider ? await options.tokenProvider() : undefined);

  return async function sendWithCare(request: Request): Promise<Response> {
    const method = request.method.toUpperCase();
    const safe = SAFE_METHODS.has(method) || (method === 'POST' && IDEMPOTENT_POST.test(new URL(request.url).pathname));
    // Only the App API is rate limited (app-api.md Limits); other surfaces send no budget headers.
    const limited = stayUnder && new URL(request.url).pathname.includes('/api/v');
    const signal = request.signal;
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= maxAttempts;
      const outgoing = request.clone();
      // The token first (a provider may refresh it): a failure there is no reason to send again.
      const bearer = await token();
      if (bearer) outgoing.headers.set('authorization', `Bearer ${bearer}`);
      const seq = limited ? await budget.take(signal) : 0;
      let res: Response;
      try {
        res = await send(outgoing);
      } catch (err) {
        if (limited) budget.done(seq, null);
        if (last || isAbort(err, signal) || !(safe || neverSent(err))) throw err;
        await sleep(backoff(attempt - 1), signal);
        continue;
      }
      if (limited) budget.done(seq, res.headers);
      if (last) return res;
      if (res.status === 429) {
        // Refused before any work was done, whatever the method: wait as told, then again.
        const wait = retryAfterSeconds(res) ?? 1;
        if (wait > maxRetryAfter) return res;
        await res.body?.cancel();
        await sleep(wait * 1000, signal);
        continue;
      }
      if (res.status >= 500 && safe) {
        const told = retryAfterSeconds(res);
        if (told !== null && told > maxRetryAfter) return res;
        await res.body?.cancel();
        await sleep(Math.max(backoff(attempt - 1), (told ?? 0) * 1000), signal);
        continue;
      }
      return res;
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Paging

/** The `rel="next"` address of a `Link` header (RFC 8288), or null. */
export function nextLink(header: string | null): string | null {
  if (!header) return null;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (!m) continue;
    for (const param of m[2].split(';')) {
      const [name, value = ''] = param.split('=', 2).map((x) => x.trim());
      if (name.toLowerCase() === 'rel' && value.replace(/^"|"$/g, '').toLowerCase().split(/\s+/).includes('next')) return m[1];
    }
  }
  return null;
}

function itemsOf(body: any): unknown[] {
  const holder = body && typeof body === 'object' && 'data' in body ? body.data : body;
  if (Array.isArray(holder)) return holder;
  if (holder && typeof holder === 'object') {
    for (const value of Object.values(holder)) if (Array.isArray(value)) return value;
  }
  return [];
}

/** The next page number from an envelope's paging, or null when this page is the last. */
function nextEnvelopePage(body: any): number | null {
  const p = body?.pagination;
  if (p && typeof p.page === 'number' && typeof p.totalPages === 'number') return p.page < p.totalPages ? p.page + 1 : null;
  const inner = body?.data?.pagination;
  if (inner && typeof inner.page === 'number' && typeof inner.hasMore === 'boolean') return inner.hasMore ? inner.page + 1 : null;
  const d = body?.data;
  if (d && typeof d.page === 'number' && typeof d.limit === 'number' && typeof d.total === 'number') return d.page * d.limit < d.total ? d.page + 1 : null;
  return null;
}

async function* walkPages(client: Client<paths>, path: string, init: any): AsyncIterableIterator<Page<any>> {
  let current = init ?? {};
  for (;;) {
    const { data, error, response } = await (client.GET as any)(path, current);
    if (!response.ok) throw new ApiError(response.status, errorMessage(error, `GET ${path} answered ${response.status}`), error);
    const items = itemsOf(data);
    yield { body: data, items: items as any[], response };
    if (items.length === 0) return;
    const link = nextLink(response.headers.get('link'));
    let query: Record<string, unknown> | null = null;
    if (link) {
      // The link's query (page, limit and the filters, C5.4) on the same path and base: the
      // token never goes to an address other than the client's own.
      query = Object.fromEntries(new URL(link, 'http://base.invalid').searchParams);
    } else {
      const page = nextEnvelopePage(data);
      if (page !== null) query = { ...(current.params?.query ?? {}), page };
    }
    if (!query) return;
    current = { ...current, params: { ...(current.params ?? {}), query } };
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * A client for one installation: the rate-limit budget it keeps is the platform's per (app, store)
 * pair, so make one client per store (with that store's token or token provider).
 */
export function createAppClient(options: AppClientOptions): AppClient {
  if (!options.accessToken && !options.tokenProvider) throw new Error('createAppClient: give accessToken or tokenProvider');
  // Without this, `localhost:3000` or a blank PLATFORM_URL fails every call with a bare "fetch failed".
  assertPlatformUrl(options.baseUrl, 'createAppClient: ');
  const budget = new RateBudget(options.rateLimit?.marginMs ?? 50);
  const client = createClient<paths>({ baseUrl: options.baseUrl, fetch: makeSender(options, budget), headers: options.headers });
  const extra = {
    pages: (path: string, init?: unknown) => walkPages(client, path, init),
    async *paginate(path: string, init?: unknown) {
      for await (const page of walkPages(client, path, init)) yield* page.items;
    },
    get rateLimit(): RateLimitState {
      return { ...budget.state };
    },
  };
  return Object.defineProperties(client, Object.getOwnPropertyDescriptors(extra)) as unknown as AppClient;
}
