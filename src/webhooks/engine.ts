// The webhook engine of one process: fan-out, claiming, sending and recording (C8), shared by the
// worker loop (role worker/all), the C12.2 job and `sendNow` (GDPR, test deliveries: send-now.ts).
//
// Worker loop: LISTEN on the outbox and delivery channels wakes it; a poll (scheduleWorkers) covers
// missed wake-ups and retries coming due. Each wake-up fans out pending events, then claims as many
// due deliveries as there are free slots (MAX_IN_FLIGHT overall, PER_HOST_CONCURRENCY per host),
// sends each outside any transaction and records the attempt (batched) while holding its lease.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import type { SecretBox } from '../crypto.js';
import type { DeliveryOutcome, Metrics } from '../platform/metrics.js';
import { OUTBOX_CHANNEL } from '../outbox/emit.js';
import { ATTEMPT_TIMEOUT_MS, PER_HOST_CONCURRENCY, WebhookHttp, type SendResult } from './http-client.js';
import {
  DELIVERY_CHANNEL, SIGNATURE_HEADER, claimDeliveries, releaseAllLeases, releaseDeliveries, signatureNow, targetGone, type ClaimedDelivery,
} from './deliveries.repo.js';
import { fanOutPending, type FanOutOptions } from './fanout.js';
import { attemptError, nextState, verdictOf, type DeliveryStatus } from './retry-policy.js';
import { AttemptRecorder } from './recorder.js';

/** Attempts in flight (sending or being recorded) in one process. */
export const MAX_IN_FLIGHT = 256;
/** Longer than the 10 s attempt deadline plus a margin for recording under load (design.md). */
export const LEASE_SECONDS = ATTEMPT_TIMEOUT_MS / 1000 + 10;

export interface EngineDeps {
  db: Db;
  clock: Clock;
  config: Config;
  secrets: SecretBox;
  log: Logger;
  metrics: Metrics;
}

export interface AttemptOutcome {
  deliveryId: string;
  attempt: number;
  status: DeliveryStatus;
  responseStatus: number | null;
  error: string | null;
}

export class WebhookEngine {
  readonly http: WebhookHttp;
  private readonly recorder: AttemptRecorder;
  private readonly attempts = new Set<Promise<unknown>>();
  private inFlight = 0;
  private pumping: Promise<void> | null = null;
  private wantFanOut = false;
  private wantClaim = false;
  private unlisten: (() => Promise<void>)[] = [];
  private started = false;
  private closed = false;

  private readonly onError: (what: string, err: unknown) => void;

  constructor(private readonly deps: EngineDeps, onError?: (what: string, err: unknown) => void) {
    this.onError = onError ?? ((what, err) => deps.log.error({ err }, `${what} failed`));
    this.http = new WebhookHttp(deps.config.allowPrivateWebhooks);
    this.recorder = new AttemptRecorder(deps.db, (err) => this.onError('recording webhook attempts', err));
  }

  /** Start the worker loop's wake-ups (worker and all processes). */
  async start(): Promise<void> {
    if (this.started || this.closed) return;
    this.started = true;
    // Nothing of this process is in flight yet, so every lease on the embedded database is a dead process's.
    if (this.deps.db.kind === 'pglite' && this.inFlight === 0) await releaseAllLeases(this.deps.db);
    this.unlisten.push(await this.deps.db.listen(OUTBOX_CHANNEL, () => this.wake(true)));
    this.unlisten.push(await this.deps.db.listen(DELIVERY_CHANNEL, () => this.wake(false)));
    this.wake(true);
  }

  /**
   * The polling fallback: also how retries that came due are noticed. It only wakes the loop: under
   * steady load the loop never goes idle, and a caller (the scheduler, a shutdown) must not wait on it.
   */
  poll(): void {
    this.wake(true);
  }

  /** C12.2 `webhook-deliveries`: fan out, then attempt every due delivery; answers attempts made. */
  async runDue(): Promise<number> {
    let attempted = 0;
    await this.fanOutAll();
    for (;;) {
      const rows = await this.claim(MAX_IN_FLIGHT);
      if (!rows.length) return attempted;
      attempted += rows.length;
      await Promise.all(rows.map((row) => this.launch(row)));
    }
  }

  /** Attempt these deliveries now (GDPR, test deliveries); those another worker holds or that are not due are skipped. */
  async sendNow(deliveryIds: string[]): Promise<AttemptOutcome[]> {
    if (!deliveryIds.length) return [];
    const rows = await this.claim(deliveryIds.length, deliveryIds);
    return Promise.all(rows.map((row) => this.launch(row)));
  }

  private wake(fanOut: boolean): void {
    if (this.closed || !this.started) return;
    if (fanOut) this.wantFanOut = true;
    this.wantClaim = true;
    this.pumping ??= this.pump().finally(() => {
      this.pumping = null;
      if ((this.wantFanOut || this.wantClaim) && !this.closed) this.wake(this.wantFanOut);
    });
  }

  private async pump(): Promise<void> {
    // Let the completions and notifications of this tick coalesce into one claim.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while ((this.wantFanOut || this.wantClaim) && !this.closed) {
        if (this.wantFanOut) {
          this.wantFanOut = false;
          await this.fanOutAll();
        }
        this.wantClaim = false;
        const free = MAX_IN_FLIGHT - this.inFlight;
        if (free <= 0) continue;
        const rows = await this.claim(free);
        for (const row of rows) void this.launch(row);
        // A full claim may have left more due rows behind.
        if (rows.length === free) this.wantClaim = true;
      }
    } catch (err) {
      this.onError('webhook worker', err);
    }
  }

  /** Every pending event, batch after batch: a batch cut by count or by bytes is followed by another. */
  private async fanOutAll(): Promise<void> {
    const onUnreadableSecret: FanOutOptions['onUnreadableSecret'] = (target, err) =>
      this.onError(`opening the signing secret of a ${target.source} webhook target (app ${target.app_id ?? '-'}, store ${target.store_id}, ${target.topic})`, err);
    await fanOutPending(this.deps.db, this.deps.secrets, () => this.deps.clock.now(), { onUnreadableSecret }, () => this.closed);
  }

  /** Claim, then keep only what this process has host slots for (the gate is taken here). */
  private async claim(limit: number, ids?: string[]): Promise<ClaimedDelivery[]> {
    const gate = this.http.gate;
    const rows = await claimDeliveries(this.deps.db, {
      now: this.deps.clock.now(), limit, leaseSeconds: LEASE_SECONDS, hostFree: gate.freeByHost(), perHost: PER_HOST_CONCURRENCY, ids,
    });
    const kept: ClaimedDelivery[] = [];
    const extra: ClaimedDelivery[] = [];
    for (const row of rows) (gate.tryAcquire(row.target_host) ? kept : extra).push(row);
    if (extra.length) await releaseDeliveries(this.deps.db, extra);
    return kept;
  }

  /** Send one claimed delivery (its host slot already taken) and record the attempt. */
  private launch(row: ClaimedDelivery): Promise<AttemptOutcome> {
    this.inFlight++;
    const p = this.attempt(row).finally(() => {
      this.inFlight--;
      this.attempts.delete(p);
      // A slot is free again: claim more (coalesced with the other completions of this tick).
      this.wake(false);
    });
    this.attempts.add(p);
    return p;
  }

  private async attempt(row: ClaimedDelivery): Promise<AttemptOutcome> {
    const attempt = row.attempt_count + 1;
    const startedAt = this.deps.clock.now();
    let result: SendResult;
    let resigned: string | null;
    try {
      ({ result, resigned } = await this.send(row, attempt));
    } finally {
      // The host is done with; recording is the database's business.
      this.http.gate.release(row.target_host);
    }
    const next = nextState(verdictOf(result), attempt, row.max_attempts, this.deps.clock.now());
    const error = attemptError(result);
    const refused = result.status === null && (error === 'blocked_address' || error === 'invalid_address');
    this.observe(row, attempt, refused ? 'blocked' : (next.status as DeliveryOutcome), result, error);
    // A failed write was already reported by the recorder; the lease then expires and the
    // delivery is attempted again (at least once).
    await this.recorder.record({
      id: row.id, token: row.lease_token, attempt, status: next.status, next_attempt_at: next.nextAttemptAt,
      response_status: result.status, response_body: result.responseBody, error, started_at: startedAt,
      duration_ms: result.durationMs, updated_at: this.deps.clock.now(), signature: resigned,
    }).catch(() => {});
    return { deliveryId: row.id, attempt, status: next.status, responseStatus: result.status, error };
  }

  /**
   * Send one attempt, or say why it is not sent. `resigned` is the signature sent when it is not the
   * stored one (an app-keyed delivery whose client secret was rotated since it was signed): the
   * attempt's record stores it, so the log shows the headers actually sent (C8.5).
   */
  private async send(row: ClaimedDelivery, attempt: number): Promise<{ result: SendResult; resigned: string | null }> {
    const notSent = (error: string) => ({ result: { status: null, responseBody: null, error, durationMs: 0 }, resigned: null });
    const gone = targetGone(row);
    if (gone) return notSent(gone);
    if (row.request_body === null) return notSent('body_pruned');
    const signature = this.sign(row, row.request_body);
    if (signature === null) return notSent('signing_key_unreadable');
    // The stored headers with this attempt's signature and number; the body is the stored bytes.
    const headers = { ...row.request_headers, [SIGNATURE_HEADER]: signature, 'X-SVC-Delivery-Attempt': String(attempt) };
    const result = await this.http.send(row.address, headers, row.request_body);
    return { result, resigned: signature === row.request_headers[SIGNATURE_HEADER] ? null : signature };
  }

  /**
   * The signature of this attempt (deliveries.repo.ts signatureNow: an app-keyed delivery is signed
   * with the app's client secret of now, C8.7). Null when the sealed secret cannot be opened (SVC_SECRET
   * changed under the stored secrets): reported, and the attempt fails as a transport error would
   * (retried while attempts are left) rather than go out with a signature the app would refuse.
   */
  private sign(row: ClaimedDelivery, body: string): string | null {
    try {
      return signatureNow(row, body, (sealed) => this.deps.secrets.open(sealed));
    } catch (err) {
      this.onError(`opening the client secret for webhook delivery ${row.id}`, err);
      return null;
    }
  }

  /** One attempt in the metrics, and in the log by delivery id (final failures at info, the rest at debug). */
  private observe(row: ClaimedDelivery, attempt: number, outcome: DeliveryOutcome, result: SendResult, error: string | null) {
    this.deps.metrics.webhookAttempt(outcome, result.durationMs);
    const final = outcome === 'failed' || outcome === 'blocked';
    if (!this.deps.log.isLevelEnabled(final ? 'info' : 'debug')) return;
    const fields = { deliveryId: row.id, attempt, outcome, responseStatus: result.status, error, durationMs: result.durationMs };
    if (final) this.deps.log.info(fields, 'webhook delivery failed');
    else this.deps.log.debug(fields, 'webhook delivery attempt');
  }

  /** Stop waking, let attempts in flight finish and be recorded, then close the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.unlisten) await stop().catch(() => {});
    await this.pumping;
    await Promise.allSettled([...this.attempts]);
    await this.recorder.flush();
    await this.http.close();
  }
}
