// Prometheus metrics of one process (`GET /metrics` on every process's port, README "Running at
// scale"). Each runtime has a registry of its own rather than prom-client's global one, so several
// services in one test process never collide over a metric name.
//
// Every label has a bounded set of values: route patterns (never raw URLs), status codes, job and
// task names, delivery outcomes. Apps, stores and ids are never labels.
import type { FunctionRunnerStats } from '../functions/runtime/index.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';

/** Route label of requests that matched no route (404s, malformed URLs). */
export const UNMATCHED_ROUTE = '(unmatched)';
/** How long a scrape waits for a value read from the database before reporting NaN. */
const COLLECT_TIMEOUT_MS = 1000;
/** The due-deliveries count stops counting here: a bounded query whatever the backlog. */
export const DUE_COUNT_CAP = 100_000;

export type DeliveryOutcome = 'success' | 'retrying' | 'failed' | 'blocked';

export class Metrics {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'svc_app_api_rate_limited_total',
    help: 'App API requests refused by the rate limit (429)',
    registers: [this.registry],
  });

  readonly rateLimitStoreErrors = new Counter({
    name: 'svc_app_api_rate_limit_store_errors_total',
    help: 'App API requests answered 503 because the rate-limit store (Redis) failed',
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: 'svc_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by outcome: success, retrying (will be retried), failed (final), blocked (address refused, not sent)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDuration = new Histogram({
    name: 'svc_webhook_delivery_duration_seconds',
    help: 'Webhook delivery attempt latency (request sent to response or error) by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly jobRuns = new Counter({
    name: 'svc_job_runs_total',
    help: 'Runs of named jobs (scheduled or on demand, C12.2) by job and outcome (success, failure)',
    labelNames: ['job', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'svc_job_run_duration_seconds',
    help: 'Duration of named job runs',
    labelNames: ['job'] as const,
    buckets: [0.01, 0.1, 1, 10, 60, 300, 1800],
    registers: [this.registry],
  });

  readonly taskRuns = new Counter({
    name: 'svc_scheduler_task_runs_total',
    help: 'Ticks of the worker scheduler by task and outcome (success, failure)',
    labelNames: ['task', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** One HTTP response; `route` is the route pattern (or UNMATCHED_ROUTE), never the URL. */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    // The labelled child is looked up once per (route, method, status), not built from a label
    // object on every request: prom-client sorts and joins the labels on each `observe(labels, v)`,
    // a measurable share of a cheap request (the App API's 404 after authentication).
    const key = `${statusCode} ${method} ${route}`;
    let child = this.httpChildren.get(key);
    if (!child) {
      child = this.httpDuration.labels({ method, route, status_code: statusCode });
      this.httpChildren.set(key, child);
    }
    child.observe(seconds);
  }

  /** Route patterns and methods are finite (no URL is ever a label), so this map stays small. */
  private readonly httpChildren = new Map<string, { observe(value: number): void }>();

  webhookAttempt(outcome: DeliveryOutcome, durationMs: number): void {
    this.webhookAttempts.inc({ outcome });
    this.webhookDuration.observe({ outcome }, durationMs / 1000);
  }

  /**
   * The function pool (C11.4) as it stands when scraped: runs asked (counter-like, since start),
   * tasks sent to workers (runs gathered together, one worker wake-up each), TimeoutErrors at the
   * deadline, runs refused or withdrawn because the pool was saturated, workers replaced, and
   * workers, busy tasks and waiting runs now. A process that has run no
   * function shows zeros (the pool starts on first use). `developer`: the developers' own pool
   * (trying and replaying, src/functions/developer-runs.ts), as `svc_developer_function_pool`.
   */
  watchFunctionPool(stats: () => FunctionRunnerStats, pool: 'checkout' | 'developer' = 'checkout'): void {
    new Gauge({
      name: pool === 'checkout' ? 'svc_function_pool' : 'svc_developer_function_pool',
      help: pool === 'checkout'
        ? 'Function pool (C11.4): runs, tasks (sent to workers), timeouts, saturated, workers_replaced since start; threads, loaded, busy, waiting now'
        : "Developers' function pool (C11.7 trying and replaying; the same stats as svc_function_pool)",
      labelNames: ['stat'] as const,
      registers: [this.registry],
      collect() {
        const s = stats();
        this.set({ stat: 'runs' }, s.runs);
        this.set({ stat: 'tasks' }, s.tasks);
        this.set({ stat: 'timeouts' }, s.timeouts);
        this.set({ stat: 'saturated' }, s.saturated);
        this.set({ stat: 'workers_replaced' }, s.workersReplaced);
        this.set({ stat: 'threads' }, s.threads);
        this.set({ stat: 'loaded' }, s.loaded);
        this.set({ stat: 'busy' }, s.busy);
        this.set({ stat: 'waiting' }, s.waiting);
      },
    });
  }

  /**
   * Gauges read from the database when scraped. The due-deliveries count only where deliveries are
   * made (worker and all processes): it is one number for the whole deployment, not per process.
   */
  watchDatabase(db: Db, clock: Clock, options: { dueDeliveries: boolean }): void {
    // The pool's figures first: gauges are collected in the order they were registered, and the
    // due count's query, started first, sat in the pool's queue when the figures were read, so an
    // idle worker showed one caller `waiting` on every scrape.
    const stats = db.poolStats?.bind(db);
    if (stats) {
      // PostgreSQL only: PGlite is one in-process session with no pool to run out of.
      new Gauge({
        name: 'svc_db_pool_connections',
        help: 'PostgreSQL pool connections: total (open), idle, waiting (callers queued for a connection)',
        labelNames: ['state'] as const,
        registers: [this.registry],
        collect() {
          const s = stats();
          this.set({ state: 'total' }, s.total);
          this.set({ state: 'idle' }, s.idle);
          this.set({ state: 'waiting' }, s.waiting);
        },
      });
    }
    if (options.dueDeliveries) {
      new Gauge({
        name: 'svc_webhook_deliveries_due',
        help: `Webhook deliveries due and waiting for an attempt (counted up to ${DUE_COUNT_CAP}; NaN when the count failed)`,
        registers: [this.registry],
        async collect() {
          this.set(await withTimeout(countDue(db, clock.now()), COLLECT_TIMEOUT_MS).catch(() => NaN));
        },
      });
    }
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}

async function countDue(db: Db, now: Date): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM webhook_deliveries
       WHERE status IN ('pending', 'retrying') AND next_attempt_at <= $1 LIMIT ${DUE_COUNT_CAP}) due`,
    [now],
    { name: 'metrics_due_deliveries' },
  );
  return rows[0]?.n ?? 0;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}

/**
 * The request-duration histogram (one observe per response, in a callback-style hook: no promise),
 * on the root instance so that every route and every 404 is measured. (Errors raised before routing
 * skip the hooks: their handler, `frameworkErrors`, observes them itself.)
 */
export function instrumentHttp(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** `GET /metrics` (no credential: keep it off the public network, README "Running at scale"). */
export async function metricsRoutes(app: FastifyInstance, { metrics }: { metrics: Metrics }) {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.text();
  });
}
