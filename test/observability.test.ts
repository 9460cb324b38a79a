// Issue 10: logs without secrets or personal data (item 7), unique request ids on every response
// (item 8) and Prometheus metrics (item 12). The service logs through one root logger; this file
// hands it a capture stream and reads every line it wrote.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createHarness, type Harness } from './helpers/harness.js';
import { operatorToken, storeWithApp } from './helpers/actors.js';
import { privateDatabase } from './fixtures/webhook-harness.js';
import { emitEvent, subscribe, webhookStore } from './fixtures/webhook-setup.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { openPostgres } from '../src/db/postgres.js';
import { buildApp } from '../src/app.js';
import { buildHealthApp } from '../src/platform/health-app.js';
import { createLogger, loggableUrl } from '../src/platform/logger.js';
import { Metrics } from '../src/platform/metrics.js';
import { Scheduler } from '../src/jobs/scheduler.js';
import { DbError } from '../src/db/errors.js';
import type { RateLimiter } from '../src/ratelimit/limiter.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const lines: string[] = [];
const logged = () => lines.join('');
const log = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });

let h: Harness;
let ops: string;
/** The service plus test-only routes that fail on the database with personal data in the parameters. */
let app: FastifyInstance;
let rx: Receiver;

beforeAll(async () => {
  // A database of this file's own on PostgreSQL: the webhook job below claims every due delivery.
  const own = await privateDatabase();
  h = await createHarness({}, { log, ...(own ? { db: await openPostgres(own.url, { max: 5 }), afterClose: own.drop } : {}) });
  ops = await operatorToken(h);
  app = await buildApp(h.deps, { docsUi: false, checkResponses: true });
  app.get('/test/db-error', async () => h.db.query('SELECT $1::uuid AS id', ['alice.person@example.com']));
  app.get('/test/db-error-named', async () => h.db.query('SELECT $1::int AS n', ['alice.person@example.com'], { name: 'obs_test_named' }));
  app.get('/test/db-conflict', async () =>
    h.db.transaction(async (tx) => {
      await tx.query('CREATE TEMP TABLE obs_people (email text UNIQUE) ON COMMIT DROP');
      await tx.query('INSERT INTO obs_people VALUES ($1)', ['alice.person@example.com']);
      await tx.query('INSERT INTO obs_people VALUES ($1)', ['alice.person@example.com']);
    }),
  );
  await app.ready();
  rx = await startReceiver((req) => ({ status: req.path === '/fail' ? 500 : 200 }));
});
afterAll(async () => {
  await app?.close();
  await rx?.close();
  await h?.close();
});
beforeEach(() => {
  lines.length = 0;
});

describe('issue 10 item 7: no secrets or personal data in logs', () => {
  it('request logs keep the path and harmless paging keys; query secrets, headers and bodies never appear', async () => {
    const s = await storeWithApp(h);
    const res = await h.req('GET', '/api/v1/products.json?limit=5&key=order-secret-123&access_token=svcat_leaked456', {
      token: s.accessToken,
      headers: { cookie: 'session=cookie-secret-789' },
    });
    expect(res.statusCode).toBe(200);
    // The order status page takes its confirmation number as ?key=.
    expect((await h.req('GET', `/storefront/${s.merchant.slug}/orders/${randomUUID()}?key=CONFIRM-SECRET-1`)).statusCode).toBe(404);
    await h.req('POST', '/auth/login', { body: { email: 'someone.private@example.com', password: 'body-secret-pass' } });

    const out = logged();
    expect(out).toContain('"url":"/api/v1/products.json?limit=5&key=[REDACTED]&access_token=[REDACTED]"');
    expect(out).toContain('"msg":"request completed"');
    for (const secret of ['order-secret-123', 'svcat_leaked456', 'cookie-secret-789', s.accessToken, 'CONFIRM-SECRET-1', 'someone.private', 'body-secret-pass']) {
      expect(out).not.toContain(secret);
    }
    expect(out.toLowerCase()).not.toContain('authorization');
    expect(out.toLowerCase()).not.toContain('cookie');
  });

  it('loggableUrl: every query value redacted but a few harmless keys; a token pasted as a key is redacted too', () => {
    expect(loggableUrl('/a/b')).toBe('/a/b');
    expect(loggableUrl('/x?page=2&limit=50&since_id=0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b&fields=id,title')).toBe(
      '/x?page=2&limit=50&since_id=0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b&fields=id,title',
    );
    expect(loggableUrl('/x?email=a%40b.example&to=a@b.example&q=alice')).toBe('/x?email=[REDACTED]&to=[REDACTED]&q=[REDACTED]');
    expect(loggableUrl('/x?limit=alice@example.com')).toBe('/x?limit=[REDACTED]');
    expect(loggableUrl('/x?svcat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA&flag')).toBe('/x?[REDACTED]&flag');
  });

  it('a database error in a request: 500 with the request id; the log has the SQLSTATE, never the parameters', async () => {
    for (const [path, code] of [['/test/db-error', '22P02'], ['/test/db-error-named', '22P02'], ['/test/db-conflict', '23505']] as const) {
      lines.length = 0;
      const res = await app.inject({ method: 'GET', url: path });
      expect(res.statusCode).toBe(500);
      const id = res.headers['x-request-id'] as string;
      expect(res.json().message).toBe(`Internal server error (request ${id})`);
      const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unexpected error');
      expect(line).toMatchObject({ level: 50, reqId: id, err: { type: 'DbError', code } });
      expect(logged()).not.toContain('alice.person');
    }
  });

  it('driver errors reach callers as DbError: code and constraint kept, detail, query and parameters gone', async () => {
    const err = await h.db
      .transaction(async (tx) => {
        await tx.query('CREATE TEMP TABLE obs_people2 (email text UNIQUE) ON COMMIT DROP');
        await tx.query('INSERT INTO obs_people2 VALUES ($1)', ['alice.person@example.com']);
        await tx.query('INSERT INTO obs_people2 VALUES ($1)', ['alice.person@example.com'], { name: 'obs_insert_person' });
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(DbError);
    expect(err).toMatchObject({ code: '23505', constraint: 'obs_people2_email_key', statement: 'obs_insert_person' });
    expect(JSON.stringify({ ...err, message: err.message, stack: err.stack })).not.toContain('alice.person');
    expect(Object.keys(err)).not.toEqual(expect.arrayContaining(['detail']));
    expect(Object.keys(err)).not.toEqual(expect.arrayContaining(['params']));
  });

  it('background work logs JSON with its own ids and no parameters: a failing job run and a failing scheduler task', async () => {
    h.deps.jobs.register('obs-failing-job', async () => {
      await h.db.query('SELECT $1::int', ['bob.person@example.com']);
      return { processed: 0 };
    });
    expect((await h.req('POST', '/apps/admin/jobs/obs-failing-job/run', { token: ops })).statusCode).toBe(500);
    const scheduler = new Scheduler(h.deps.log, h.deps.metrics);
    scheduler.every('obs-task', 60_000, () => h.db.query('SELECT $1::uuid', ['carol.person@example.com']));
    await expect.poll(() => logged().includes('background task failed')).toBe(true);
    await scheduler.stop();

    const entries = lines.map((l) => JSON.parse(l));
    const jobLine = entries.find((l) => l.msg === 'job run failed');
    expect(jobLine).toMatchObject({ level: 50, job: 'obs-failing-job', runId: expect.stringMatching(UUID), err: { type: 'DbError', code: '22P02' } });
    expect(entries.find((l) => l.msg === 'background task failed')).toMatchObject({ task: 'obs-task', tick: 1, err: { code: '22P02' } });
    expect(logged()).not.toContain('bob.person');
    expect(logged()).not.toContain('carol.person');
  });
});

describe('issue 10 item 8: request ids', () => {
  it('unique per request (UUIDs, not a per-process counter), returned in X-Request-Id and logged as reqId', async () => {
    const a = await h.req('GET', '/healthz');
    const b = await app.inject({ method: 'GET', url: '/healthz' }); // a second instance on the same deps
    const ids = [a.headers['x-request-id'], b.headers['x-request-id']];
    for (const id of ids) expect(id).toMatch(UUID);
    expect(ids[0]).not.toBe(ids[1]);
    expect(logged()).toContain(`"reqId":"${ids[0]}"`);
  });

  it('a well-formed incoming X-Request-Id is kept; a malformed or oversized one is replaced', async () => {
    const kept = await h.req('GET', '/healthz', { headers: { 'x-request-id': 'lb-7f3a.9:trace_1-x' } });
    expect(kept.headers['x-request-id']).toBe('lb-7f3a.9:trace_1-x');
    for (const bad of ['has space', '<script>', 'a'.repeat(129), 'é']) {
      const res = await h.req('GET', '/healthz', { headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).toMatch(UUID);
    }
  });

  it('on every response: 200, 404, App API 401, 404 after auth, 429, 400 before routing, 500', async () => {
    const s = await storeWithApp(h);
    const refusing: RateLimiter = { hit: (_k, limit) => ({ allowed: false, limit, remaining: 0, resetAt: 0 }), close: async () => {} };
    const responses = [
      await h.req('GET', '/healthz'),
      await h.req('GET', '/no/such/path'),
      await h.req('GET', '/api/v1/products.json'),
      await h.req('GET', '/api/v1/no-such-thing.json', { token: s.accessToken }),
      await h.req('GET', '/api/v1/%zz', { token: s.accessToken }),
      await app.inject({ method: 'GET', url: '/test/db-error' }),
    ];
    const limiter = h.deps.limiter;
    h.deps.limiter = refusing;
    try {
      responses.push(await h.req('GET', '/api/v1/products.json', { token: s.accessToken }));
    } finally {
      h.deps.limiter = limiter;
    }
    expect(responses.map((r) => r.statusCode)).toEqual([200, 404, 401, 404, 400, 500, 429]);
    for (const r of responses) expect(r.headers['x-request-id']).toMatch(UUID);
  });
});

/** The value of one sample: `name{...labels...} value`, labels matched as a subset. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('issue 10 item 12: GET /metrics (Prometheus)', () => {
  const scrape = async () => {
    const res = await h.req('GET', '/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.body;
  };

  it('request durations by method, route pattern and status code; never a raw URL', async () => {
    const s = await storeWithApp(h);
    await h.req('GET', '/api/v1/products.json?limit=1&key=metrics-secret', { token: s.accessToken });
    await h.req('GET', `/api/v1/products/${randomUUID()}.json`, { token: s.accessToken });
    await h.req('GET', `/no/such/${randomUUID()}`);
    await h.req('GET', '/api/v1/%zz', { token: s.accessToken }); // fails before routing: no hook runs, measured all the same
    const text = await scrape();
    expect(sample(text, 'svc_http_request_duration_seconds_count', { method: 'GET', route: '/api/v1/products.json', status_code: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_http_request_duration_seconds_count', { route: '/api/v1/products/:id.json', status_code: '404' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_http_request_duration_seconds_bucket', { route: '/api/v1/products.json', le: '+Inf' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_http_request_duration_seconds_count', { route: '(unmatched)', status_code: '404' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_http_request_duration_seconds_count', { route: '(unmatched)', status_code: '400' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('metrics-secret');
    expect(text).not.toMatch(/route="[^"]*\?/);
    expect(text).not.toMatch(/route="\/no\/such\//);
    // Default process metrics are there too.
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('App API 429s are counted', async () => {
    const s = await storeWithApp(h);
    const before = sample(await scrape(), 'svc_app_api_rate_limited_total') ?? 0;
    const limiter = h.deps.limiter;
    h.deps.limiter = { hit: (_k, limit) => ({ allowed: false, limit, remaining: 0, resetAt: 0 }), close: async () => {} };
    try {
      for (let i = 0; i < 3; i++) expect((await h.req('GET', '/api/v1/products.json', { token: s.accessToken })).statusCode).toBe(429);
    } finally {
      h.deps.limiter = limiter;
    }
    expect(sample(await scrape(), 'svc_app_api_rate_limited_total')).toBe(before + 3);
  });

  it('job runs by job and outcome, with their duration', async () => {
    h.deps.jobs.register('obs-ok-job', async () => ({ processed: 2 }));
    await h.req('POST', '/apps/admin/jobs/obs-ok-job/run', { token: ops });
    await h.req('POST', '/apps/admin/jobs/obs-ok-job/run', { token: ops });
    const text = await scrape();
    expect(sample(text, 'svc_job_runs_total', { job: 'obs-ok-job', outcome: 'success' })).toBe(2);
    expect(sample(text, 'svc_job_runs_total', { job: 'obs-failing-job', outcome: 'failure' })).toBe(1);
    expect(sample(text, 'svc_job_run_duration_seconds_count', { job: 'obs-ok-job' })).toBe(2);
    expect(sample(text, 'svc_scheduler_task_runs_total', { task: 'obs-task', outcome: 'failure' })).toBe(1);
    expect(logged()).toMatch(/"job":"obs-ok-job","runId":"[0-9a-f-]{36}","processed":2/);
  });

  it('webhook delivery attempts by outcome with their latency, and the due deliveries gauge', async () => {
    const s = await webhookStore(h);
    await subscribe(h, s.accessToken, 'products/create', `${rx.url}/ok`);
    await subscribe(h, s.accessToken, 'products/create', `${rx.url}/fail`);
    await emitEvent(h, s.merchant.storeId, 'products/create', { id: 1 });
    const text0 = await scrape();
    const before = (outcome: string) => sample(text0, 'svc_webhook_delivery_attempts_total', { outcome }) ?? 0;
    expect((await h.req('POST', '/apps/admin/jobs/webhook-deliveries/run', { token: ops })).statusCode).toBe(200);
    const text = await scrape();
    expect(sample(text, 'svc_webhook_delivery_attempts_total', { outcome: 'success' })).toBe(before('success') + 1);
    expect(sample(text, 'svc_webhook_delivery_attempts_total', { outcome: 'retrying' })).toBe(before('retrying') + 1);
    expect(sample(text, 'svc_webhook_delivery_duration_seconds_count', { outcome: 'success' })).toBeGreaterThanOrEqual(1);
    // The retry is a minute away: nothing of this file is due now.
    expect(sample(text, 'svc_webhook_deliveries_due')).toBe(0);
    await h.advance(3600);
    expect(sample(await scrape(), 'svc_webhook_deliveries_due')).toBe(1);
  });

  it('the function pool (C11.4): runs, tasks, timeouts and saturation since start, and workers now', async () => {
    const before = await scrape();
    const runs0 = sample(before, 'svc_function_pool', { stat: 'runs' })!;
    const tasks0 = sample(before, 'svc_function_pool', { stat: 'tasks' })!;
    expect(runs0).toBeGreaterThanOrEqual(0);
    // Two asks of the same moment, three runs: one task to a worker.
    const results = await Promise.all([
      h.deps.functions.runAll([
        { target: 'cart.validations.generate.run', expression: '{"operations": []}', input: {} },
        { target: 'cart.validations.generate.run', expression: '{"operations": []}', input: { a: 1 } },
      ]),
      h.deps.functions.run({ target: 'cart.validations.generate.run', expression: '{"operations": []}', input: { b: 1 } }),
    ]);
    expect(results.flat().map((r) => r.status)).toEqual(['success', 'success', 'success']);
    const text = await scrape();
    expect(sample(text, 'svc_function_pool', { stat: 'runs' })).toBe(runs0 + 3);
    expect(sample(text, 'svc_function_pool', { stat: 'tasks' })).toBe(tasks0 + 1);
    expect(sample(text, 'svc_function_pool', { stat: 'threads' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_function_pool', { stat: 'busy' })).toBe(0);
    for (const stat of ['timeouts', 'saturated', 'workers_replaced', 'loaded', 'waiting']) expect(sample(text, 'svc_function_pool', { stat })).toBeGreaterThanOrEqual(0);
  });

  it('PostgreSQL pool use on PostgreSQL; nothing of the kind on the embedded database', async () => {
    const text = await scrape();
    if (h.db.kind === 'postgres') {
      expect(sample(text, 'svc_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'svc_db_pool_connections', { state: 'idle' })).toBeLessThanOrEqual(sample(text, 'svc_db_pool_connections', { state: 'total' })!);
      expect(sample(text, 'svc_db_pool_connections', { state: 'waiting' })).toBeGreaterThanOrEqual(0);
      // Found in review: the scrape's own due-deliveries query was counted as a caller waiting, on
      // every scrape of an idle process. Nothing else queues here, so some scrape sees none.
      const waiting: number[] = [];
      for (let i = 0; i < 5; i++) waiting.push(sample(await scrape(), 'svc_db_pool_connections', { state: 'waiting' })!);
      expect(Math.min(...waiting), String(waiting)).toBe(0);
    } else {
      expect(text).not.toContain('svc_db_pool_connections');
    }
  });

  it('a registry per runtime: several in one process neither collide nor share counts', async () => {
    const a = new Metrics();
    const b = new Metrics({ processMetrics: false });
    a.rateLimited.inc();
    expect(sample(await a.text(), 'svc_app_api_rate_limited_total')).toBe(1);
    expect(sample(await b.text(), 'svc_app_api_rate_limited_total')).toBe(0);
  });
});

describe('issue 10 item 11: the HTTP side of a worker process', () => {
  it('serves /healthz, /readyz and /metrics with request ids, and nothing of the API', async () => {
    const worker = await buildHealthApp(h.deps);
    try {
      const get = (url: string) => worker.inject({ method: 'GET', url });
      expect((await get('/healthz')).json()).toEqual({ status: 'ok' });
      const ready = await get('/readyz');
      expect(ready.statusCode).toBe(200);
      expect(ready.headers['x-request-id']).toMatch(UUID);
      const metrics = await get('/metrics');
      expect(metrics.statusCode).toBe(200);
      expect(metrics.body).toContain('svc_job_runs_total');
      expect((await get('/api/v1/products.json')).statusCode).toBe(404);
      expect((await get('/%zz')).headers['x-request-id']).toMatch(UUID);
    } finally {
      await worker.close();
    }
  });
});
