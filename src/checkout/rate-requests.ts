// Shipping apps' rate requests (C15.3) are sent, and their replies read, on a thread of their own
// (rate-requests.worker.ts), not on the service's main thread, where every buyer's HTTP request is
// handled. Two reasons:
// - A quote asking apps does most of its work around the apps: signing two requests, two HTTP
//   exchanges through undici, reading and validating two replies. Under load the buyers whose apps
//   answer at the same moment queued behind one another on the main thread for all of it (issue 12's
//   `rates-apps`: 32 buyers, apps at 50 ms; docs/decisions.md "Shipping apps' requests on a thread
//   of their own"). On the thread, the main thread keeps only the quote's own work.
// - A reply is a stranger's bytes (up to REPLY_MAX_BYTES of JSON to parse and check): however an
//   app answers, it costs the storefront's main thread nothing but the small message of the rates.
//
// The main side here batches the requests of one turn of the event loop into one message, and the
// thread its answers likewise. The thread enforces each request's deadline; this side keeps a
// backstop (a request unanswered well past its deadline is a timeout) and, if the thread dies,
// answers every request in flight with a failure and starts a new thread at the next request. So a
// quote never waits longer than its timeout and a grace, whatever happens to the thread.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../platform/logger.js';
import type { AppRate } from './rate-reply.js';

/** C15.3: each app has 5 seconds (connect, answer and body together). */
export const RATE_REQUEST_TIMEOUT_MS = 5000;
export const RATE_TOPIC = 'shipping/rates';
/**
 * Connections per app origin. Every buyer quoting at once is a request in flight to each app, and
 * a request that waits for a free connection waits a whole answer: at webhooks' 32 per origin, 32
 * buyers quoting two apps on one host took twice the apps' time. Requests still wait for a
 * connection beyond this (within their 5 s), so a slow app cannot take unbounded sockets.
 */
export const RATE_CONNECTIONS_PER_ORIGIN = 256;
/** Reply bytes read: 20 rates fit many times over; a longer reply is cut off, so malformed. */
export const REPLY_MAX_BYTES = 256 * 1024;
/** How long past its deadline a request may stay unanswered by the thread before it is a timeout here. */
export const THREAD_GRACE_MS = 1000;

/** One signed rate request, as the thread sends it. */
export interface RateRequestJob {
  url: string;
  /** The app's client secret, opened (the thread signs the body with it). */
  secret: string;
  shopDomain: string;
  body: string;
  timeoutMs: number;
  /** The store's currency: the only one whose rates are kept (rate-reply.ts). */
  currency: string;
}

/** What came of a request: a status (or why none), and the validated rates of a 2xx reply. */
export interface RateRequestOutcome {
  /** HTTP status, or null when no response arrived (then `error` says why). */
  status: number | null;
  /** `timeout`, `blocked_address`, `network_error: <code>`; null when a response arrived. */
  error: string | null;
  durationMs: number;
  /** A 2xx reply's rates as the checkout keeps them; null for a malformed 2xx and for any other outcome. */
  rates: AppRate[] | null;
}

/** A 2xx: the only answer whose rates count (C15.3); shared by the thread and the quote. */
export function isSuccessStatus(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

/** What the thread is started with. */
export interface RateThreadOptions {
  allowPrivate: boolean;
  /**
   * Modules (file URLs, TypeScript allowed) the thread imports before its own. Tests use it: a
   * module mock of the test's own thread (vi.mock) never reaches this thread, so a test that needs
   * names answered by its own DNS (test/helpers/rebind-dns-thread.ts) installs it here.
   */
  preload?: string[];
}

/** Messages between the two sides: batches. */
export type JobMessage = (RateRequestJob & { id: number })[];
export type OutcomeMessage = (RateRequestOutcome & { id: number })[];

interface InFlight {
  resolve: (outcome: RateRequestOutcome) => void;
  /** Monotonic ms after which this side gives up on the thread's answer. */
  giveUpAt: number;
  startedAt: number;
}

const threadEntry = new URL('./rate-requests-entry.mjs', import.meta.url);

export class RateRequests {
  private thread: Worker | null = null;
  private nextId = 1;
  private readonly inFlight = new Map<number, InFlight>();
  private gathered: JobMessage = [];
  private backstop: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: RateThreadOptions, private readonly log: Logger) {}

  /** Sends the request on the thread; never rejects (every failure is an outcome). */
  ask(job: RateRequestJob): Promise<RateRequestOutcome> {
    if (this.closed) return Promise.resolve(failed('network_error: shutting down', 0));
    return new Promise((resolve) => {
      const id = this.nextId++;
      const startedAt = performance.now();
      this.inFlight.set(id, { resolve, startedAt, giveUpAt: startedAt + job.timeoutMs + THREAD_GRACE_MS });
      if (this.gathered.length === 0) setImmediate(() => this.send());
      this.gathered.push({ ...job, id });
      this.backstop ??= setInterval(() => this.giveUpOnLate(), THREAD_GRACE_MS).unref();
    });
  }

  /** Requests sent and not yet answered (tests, metrics). */
  get pending(): number {
    return this.inFlight.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const thread = this.thread;
    this.thread = null;
    this.answerAll('network_error: shutting down');
    await thread?.terminate();
  }

  private send(): void {
    const batch = this.gathered;
    this.gathered = [];
    const live = batch.filter((job) => this.inFlight.has(job.id));
    if (!live.length || this.closed) return;
    try {
      this.threadNow().postMessage(live satisfies JobMessage);
    } catch (err) {
      this.log.error({ err }, 'shipping rate requests thread could not be reached');
      for (const job of live) this.answer(job.id, failed('network_error: rate thread unavailable', 0));
    }
  }

  private threadNow(): Worker {
    if (this.thread) return this.thread;
    const thread = new Worker(threadEntry, { workerData: this.options satisfies RateThreadOptions, name: 'shipping-rate-requests' });
    // The thread never keeps the process alive: a request in flight holds the backstop timer (unref'd too); shutdown closes it.
    thread.unref();
    thread.on('message', (outcomes: OutcomeMessage) => {
      for (const { id, ...outcome } of outcomes) this.answer(id, outcome);
    });
    thread.on('error', (err) => this.log.error({ err }, 'shipping rate requests thread failed'));
    thread.on('exit', (code) => {
      if (this.thread !== thread) return;
      this.thread = null;
      if (!this.closed) this.log.error({ code }, 'shipping rate requests thread stopped; a new one starts at the next request');
      // Whatever it was sending is lost with it: those requests gave nothing.
      this.answerAll('network_error: rate thread stopped');
    });
    this.thread = thread;
    return thread;
  }

  private answer(id: number, outcome: RateRequestOutcome): void {
    const waiting = this.inFlight.get(id);
    if (!waiting) return;
    this.inFlight.delete(id);
    waiting.resolve(outcome);
    if (this.inFlight.size === 0 && this.backstop) {
      clearInterval(this.backstop);
      this.backstop = null;
    }
  }

  private answerAll(error: string): void {
    const now = performance.now();
    for (const [id, waiting] of [...this.inFlight]) this.answer(id, failed(error, now - waiting.startedAt));
  }

  /** The backstop: a request the thread has not answered well past its deadline is a timeout. */
  private giveUpOnLate(): void {
    const now = performance.now();
    for (const [id, waiting] of [...this.inFlight]) {
      if (now >= waiting.giveUpAt) this.answer(id, failed('timeout', now - waiting.startedAt));
    }
  }
}

function failed(error: string, durationMs: number): RateRequestOutcome {
  return { status: null, error, durationMs: Math.round(durationMs), rates: null };
}
