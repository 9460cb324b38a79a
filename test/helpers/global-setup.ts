// Once per test run. On PGlite: build one migrated database and dump it, so each test file starts
// from a copy in well under a second instead of running initdb (~3 s). On PostgreSQL
// (DATABASE_URL set): create one database for the run, migrate it once, drop it at the end.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
    return () => rmSync(dir, { recursive: true, force: true });
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
  };
}
