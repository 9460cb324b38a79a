// Once per test run. On PGlite: build one migrated database and dump it, so each test file starts
// from a copy in well under a second instead of running initdb (~3 s). On PostgreSQL
// (DATABASE_URL set): create one database for the run, migrate it once, drop it at the end.
// Either way, every temporary directory of the run goes under one run directory, checked and
// removed at the end.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openPGlite } from '../../src/db/pglite.js';
import { isPGliteDb } from '../../src/db/pglite.js';
import { migrate } from '../../src/db/migrate.js';
import { openPostgres } from '../../src/db/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string | null;
    testDatabaseUrl: string | null;
  }
}

export default async function setup(project: TestProject) {
  const checkTempDirs = redirectTempDirs();
  const serverUrl = process.env.DATABASE_URL?.trim() || null;
  if (!serverUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-test-template-'));
    const db = await openPGlite({});
    await migrate(db);
    if (!isPGliteDb(db)) throw new Error('expected PGlite');
    const dump = await db.dumpDataDir();
    const file = join(dir, 'template.tar');
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    await db.close();
    project.provide('pgliteTemplate', file);
    project.provide('testDatabaseUrl', null);
    return () => {
      rmSync(dir, { recursive: true, force: true });
      checkTempDirs();
    };
  }

  const name = `svc_test_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString());
  await migrate(db);
  await db.close();
  project.provide('pgliteTemplate', null);
  project.provide('testDatabaseUrl', url.toString());
  console.log(`tests run on PostgreSQL database ${name}`);
  return async () => {
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
    checkTempDirs();
  };
}

/**
 * Points TMPDIR at a directory of this run, so every `tmpdir()` of the test workers (forked after
 * this, inheriting the environment) lands there, whoever made it. At the end whatever is left is a
 * test that did not clean up after itself (test/helpers/temp-dirs.ts does): the run fails naming it,
 * and the run directory is removed all the same, so nothing accumulates in the system's tmp.
 */
function redirectTempDirs(): () => void {
  const previous = process.env.TMPDIR;
  const runDir = mkdtempSync(join(tmpdir(), 'svc-test-run-'));
  process.env.TMPDIR = runDir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    // tsx keeps its compile cache in `$TMPDIR/tsx-<uid>` for the service processes tests start:
    // the tool's cache, not a test's leftover (removed with the run directory all the same).
    const left = readdirSync(runDir).filter((name) => !/^tsx-\d+$/.test(name));
    rmSync(runDir, { recursive: true, force: true });
    if (!left.length) return;
    process.exitCode = 1; // Vitest reports an error thrown here but would still exit 0
    throw new Error(`the tests left ${left.length} temporary directories behind (now removed): ${left.join(', ')}; make them with tempDir() from test/helpers/temp-dirs.ts`);
  };
}
