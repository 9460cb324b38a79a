// Processes starting together (contract C1.2, C1.3, C1.5): an api and a worker on one machine, a
// deployment's processes on a new PostgreSQL database. Whatever a first start writes once (the
// development secret, the embedded database's lock, the demo data) is written by exactly one of
// them, and every one of them starts. Real processes, released at the same moment.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort, ROOT, startService, type ServiceProcess } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';
import { privateDatabase } from './fixtures/webhook-harness.js';
import { DEMO } from '../src/seed/seed.js';

const onPostgres = !!inject('testDatabaseUrl');

/**
 * Runs `processes` copies of test/fixtures/first-start-race.ts, released together, for `rounds`
 * rounds `roundMs` apart (each on a fresh directory); answers each round's values, one per process.
 * The locks won are held until every process has done every round.
 */
async function race(mode: 'secret' | 'lock', processes: number, rounds: number, roundMs: number): Promise<string[][]> {
  const base = tempDir(`svc-race-${mode}-`);
  const children = Array.from({ length: processes }, () =>
    spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/first-start-race.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '',
        RACE_MODE: mode, RACE_DIR: base, RACE_ROUNDS: String(rounds), RACE_ROUND_MS: String(roundMs),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const byRound: string[][] = Array.from({ length: rounds }, () => []);
  const all = (message: string) => {
    for (const c of children) c.stdin.write(message + '\n');
  };
  let ready = 0;
  let done = 0;
  const exited = children.map(
    (child) =>
      new Promise<void>((resolve, reject) => {
        let stderr = '';
        child.stderr.on('data', (b) => (stderr += b));
        createInterface({ input: child.stdout }).on('line', (line) => {
          const msg = JSON.parse(line);
          // Far enough ahead for every process to be waiting for it.
          if (msg.type === 'ready' && ++ready === processes) all(`go ${Date.now() + 500}`);
          else if (msg.type === 'done' && ++done === processes) all('release');
          else if (typeof msg.round === 'number') byRound[msg.round].push(msg.value);
        });
        child.on('error', reject);
        child.stdin.on('error', () => {}); // a child that died early is reported by 'close'
        child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}: ${stderr}`))));
      }),
  );
  try {
    await Promise.all(exited);
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  }
  return byRound;
}

describe('C1.2 / C1.3 first starts together on one fresh data dir', () => {
  it('the development secret: every process gets the same one, the one kept in the data dir', async () => {
    // An api and a worker on one machine, both without SVC_SECRET: one must not seal app secrets
    // and tokens the other cannot open.
    // Without the fix, more than one round in ten saw two secrets, or an empty one.
    const rounds = await race('secret', 6, 300, 10);
    for (const secrets of rounds) {
      expect(secrets).toHaveLength(6);
      expect(new Set(secrets).size, `secrets of one round: ${secrets.join(', ')}`).toBe(1);
      expect(secrets[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
  }, 120_000);

  it('the embedded database: exactly one process gets the data dir, every other one is refused', async () => {
    // Two processes opening one PGlite data dir would both write it, and corrupt it.
    // Without the fix, about three rounds in a hundred had two winners: one read the winner's lock
    // file before its pid was written, took it for a dead process's, and took it over.
    const rounds = await race('lock', 6, 1000, 10);
    for (const outcomes of rounds) {
      expect(outcomes).toHaveLength(6);
      expect(outcomes.filter((o) => o === 'won'), outcomes.join('\n')).toHaveLength(1);
      for (const o of outcomes.filter((o) => o !== 'won')) expect(o).toMatch(/^refused: .* is in use by process \d+/);
    }
  }, 120_000);
});

describe.runIf(onPostgres)('C1.5 / C1.3 first starts together on a new PostgreSQL database', () => {
  const databases: { drop(): Promise<void> }[] = [];
  const services: ServiceProcess[] = [];
  afterAll(async () => {
    for (const svc of services) {
      if (svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGKILL');
      await svc.exited;
    }
    for (const db of databases) await db.drop();
  });

  it('every process becomes ready, and the demo store is loaded once', async () => {
    const own = (await privateDatabase())!;
    databases.push(own);
    // A deployment's processes (api, worker, all) in development (the demo loads on an empty
    // database), each on its own machine as far as the data dir goes.
    for (const role of ['all', 'api', 'worker']) {
      services.push(startService({
        DATABASE_URL: own.url, SVC_ROLE: role, PORT: String(await freePort()),
        SVC_DATA_DIR: tempDir('svc-race-seed-'), SVC_SECRET: 'startup-race-secret-0123456789abcdef',
      }));
    }
    await Promise.all(services.map((svc) => svc.waitFor(/process ready/, 150_000)));

    const db = new pg.Client({ connectionString: own.url });
    await db.connect();
    try {
      const count = async (sql: string, params: unknown[]) => (await db.query(sql, params)).rows[0].n;
      expect(await count('SELECT count(*)::int AS n FROM users WHERE lower(email) = ANY($1)', [[DEMO.merchant.email, DEMO.partner.email]])).toBe(2);
      expect(await count('SELECT count(*)::int AS n FROM stores', [])).toBe(1);
      expect(await count('SELECT count(*)::int AS n FROM apps WHERE name = $1', [DEMO.appName])).toBe(1);
      expect(await count(`SELECT count(*)::int AS n FROM platform_settings WHERE key = 'demo_seeded'`, [])).toBe(1);
    } finally {
      await db.end();
    }
    // The banner (api and all) names the one demo store.
    for (const svc of services.filter((_, i) => i < 2)) await svc.waitFor(/Merchant login: merchant@demo\.test/);
  }, 240_000);
});
