// Running the service across processes (contract C1.2, C1.3, C12): what must hold when several
// processes share one PostgreSQL, when a connection drops, when processes start together, and for
// every value the README's configuration table allows.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, TEST_SECRET, type Harness } from './helpers/harness.js';
import { operatorToken, storeWithApp, unique } from './helpers/actors.js';
import { freePort, startService, type ServiceProcess } from './helpers/process.js';
import { privateDatabase } from './fixtures/webhook-harness.js';
import { ensureOperator } from '../src/accounts/accounts.service.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import type { Db } from '../src/db/db.js';

const onPostgres = !!inject('testDatabaseUrl');

/**
 * The database, except that the first `n` statements matching `sql` wait until all `n` were asked:
 * what several processes doing the same thing at the same moment look like to the database.
 */
function meetingAt(db: Db, sql: RegExp, n: number): Db {
  let arrived = 0;
  let release!: () => void;
  const together = new Promise<void>((resolve) => (release = resolve));
  const query: Db['query'] = async (text, params, options) => {
    if (sql.test(text) && arrived < n) {
      if (++arrived === n) release();
      await together;
    }
    return db.query(text, params, options);
  };
  return Object.assign(Object.create(db) as Db, { query });
}

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

describe('C1.3 processes starting together', () => {
  it('SVC_ADMIN_EMAIL set on every process: starts racing to create the operator all succeed, one account', async () => {
    // What each process's start does (main.ts); two at once is what two processes of a deployment do.
    // The processes' look-ups are made to meet (each waits for the others') so that every start
    // sees no account yet, as processes on several machines may.
    const email = `ops-race-${unique()}@example.com`;
    const deps = { ...h.deps, db: meetingAt(h.deps.db, /FROM users WHERE lower\(email\)/, 3) };
    const results = await Promise.allSettled([
      ensureOperator(deps, email, 'operator-password-1'),
      ensureOperator(deps, email, 'operator-password-1'),
      ensureOperator(deps, email.toUpperCase(), 'operator-password-1'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const ids = new Set(results.map((r) => (r as PromiseFulfilledResult<string>).value));
    expect(ids.size).toBe(1);
    const { rows } = await h.db.query<{ role: string }>('SELECT role FROM users WHERE lower(email) = lower($1)', [email]);
    expect(rows).toEqual([{ role: 'SUPER_ADMIN' }]);
    const login = await h.req('POST', '/auth/login', { body: { email, password: 'operator-password-1' } });
    expect(login.statusCode).toBe(200);
  });
});

describe.runIf(onPostgres)('C1.3 processes migrating one new PostgreSQL database together', () => {
  it('every start succeeds: the migrations table is created under the same lock as the migrations', async () => {
    // Four processes' first starts on an empty database (a new deployment), a few times over.
    for (let round = 0; round < 3; round++) {
      const own = (await privateDatabase())!;
      const dbs = await Promise.all([1, 2, 3, 4].map(() => openPostgres(own.url, { max: 2 })));
      try {
        const results = await Promise.allSettled(dbs.map((db) => migrate(db)));
        const failures = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
        expect(failures).toEqual([]);
        // Each migration was applied once, by one of them.
        expect(results.reduce((n, r) => n + (r as PromiseFulfilledResult<number>).value, 0)).toBe(
          (await dbs[0].query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations')).rows[0].n,
        );
      } finally {
        for (const db of dbs) await db.close();
        await own.drop();
      }
    }
  }, 120_000);
});

describe.runIf(onPostgres)('C4.7 / C1.3 the LISTEN connection (PostgreSQL)', () => {
  let other: Harness;
  beforeAll(async () => {
    // A second service on the same database: another process, as far as NOTIFY is concerned.
    other = await createHarness();
  });
  afterAll(() => other?.close());

  it('comes back after it was dropped: a revocation still takes effect at once in the other process', async () => {
    const s = await storeWithApp(h);
    const products = () => other.req('GET', '/api/v1/products.json', { token: s.accessToken });
    expect((await products()).statusCode).toBe(200); // now cached in `other`

    // A heard-back probe on a channel of this test's own, to know when the listener is there.
    const channel = `ops_review_${unique()}`;
    const heard: string[] = [];
    await other.db.listen(channel, (payload) => heard.push(payload));
    // The database restarts, a network blip, an idle-connection reaper: the listener's session ends.
    const listenerPid = (other.db as unknown as { listener: { processID: number } }).listener.processID;
    await h.db.query('SELECT pg_terminate_backend($1)', [listenerPid]);
    await expect.poll(async () => {
      await h.db.query(`SELECT pg_notify($1, 'probe')`, [channel]);
      return heard.length > 0;
    }, { timeout: 15_000, interval: 300 }).toBe(true);

    const uninstalled = await h.req('DELETE', `/apps/installations/${s.installationId}`, { token: s.merchant.token });
    expect(uninstalled.statusCode).toBe(200);
    // C4.7: "tokens are revoked at once (401 afterwards)", in every process, not after the cache's TTL.
    await expect.poll(async () => (await products()).statusCode, { timeout: 2000, interval: 100 }).toBe(401);
  }, 30_000);
});

describe('C8.10 SVC_DELIVERY_RETENTION_DAYS: every whole number from 1 works', () => {
  it('a very long retention (keep, in effect, for ever) prunes nothing and the job does not fail', async () => {
    const long = await createHarness({ SVC_DELIVERY_RETENTION_DAYS: '999999999999' });
    try {
      const ops = await operatorToken(long);
      const res = await long.req('POST', '/apps/admin/jobs/webhook-retention/run', { token: ops });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({ job: 'webhook-retention', processed: 0 });
    } finally {
      await long.close();
    }
  });
});

describe.runIf(onPostgres)('C12.1 the test clock across api processes (PostgreSQL)', () => {
  const children: ServiceProcess[] = [];
  let own: { url: string; drop(): Promise<void> } | null = null;
  afterAll(async () => {
    for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await own?.drop();
  });

  it('advanced through one api process, the service clock of every other api process moves too', async () => {
    // A database of its own: the real processes keep the deployment's clock under the default key.
    own = await privateDatabase();
    const email = `ops-${unique()}@example.com`;
    const env = {
      DATABASE_URL: own!.url, SVC_SECRET: TEST_SECRET, SVC_SEED: 'none', NODE_ENV: 'development', SVC_ROLE: 'api',
      SVC_TEST_CLOCK: '1', SVC_ADMIN_EMAIL: email, SVC_ADMIN_PASSWORD: 'operator-password', SVC_BASE_URL: 'http://svc.test',
    };
    const ports = [await freePort(), await freePort()];
    for (const port of ports) children.push(startService({ ...env, PORT: String(port) }));
    await Promise.all(children.map((c) => c.waitFor(/svc api process ready/)));
    const [a, b] = ports.map((port) => `http://127.0.0.1:${port}`);
    const login = await fetch(`${a}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'operator-password' }) });
    const token = (await login.json()).data.token as string;
    const auth = { authorization: `Bearer ${token}` };
    const clockOf = async (base: string) => {
      const res = await fetch(`${base}/apps/admin/clock`, { headers: auth });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      return new Date(body.data.now).getTime();
    };

    const before = await clockOf(b);
    const advanced = await fetch(`${a}/apps/admin/clock/advance`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ seconds: 3 * 3600 }) });
    expect(advanced.status).toBe(200);
    await expect.poll(async () => (await clockOf(b)) - before, { timeout: 5000, interval: 200 }).toBeGreaterThanOrEqual(3 * 3600_000);
    for (const c of children) c.child.kill('SIGTERM');
    for (const c of children) expect((await c.exited).code).toBe(0);
  }, 90_000);
});
