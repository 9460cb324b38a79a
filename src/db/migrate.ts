// Numbered SQL migrations (src/db/migrations/NNNN_name.sql), applied at start in order, each in
// its own transaction, recorded with a hash so an edited, already-applied file is caught.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.js';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
// Any fixed number: it serialises concurrent starts of several processes on one PostgreSQL.
const MIGRATION_LOCK = 727_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  hash: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const sql = readFileSync(join(dir, file), 'utf8');
      return {
        version: Number(file.slice(0, 4)),
        name: file.replace(/\.sql$/, ''),
        sql,
        hash: createHash('sha256').update(sql).digest('hex'),
      };
    });
}

export class MigrationError extends Error {}

export async function migrate(db: Db, migrations = loadMigrations()): Promise<number> {
  // Under the lock too: two first starts running CREATE TABLE IF NOT EXISTS at the same moment
  // both create, and one fails on PostgreSQL's catalog (pg_type_typname_nsp_index).
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, hash text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`);
  });
  let applied = 0;
  for (const m of migrations) {
    const done = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const { rows } = await tx.query<{ hash: string }>('SELECT hash FROM schema_migrations WHERE version = $1', [m.version]);
      if (rows.length) {
        if (rows[0].hash !== m.hash) throw new MigrationError(`migration ${m.name} was changed after it was applied`);
        return false;
      }
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name, hash) VALUES ($1, $2, $3)', [m.version, m.name, m.hash]);
      return true;
    });
    if (done) applied++;
  }
  return applied;
}

/** True when every migration file has been applied (C1.4 readiness). */
export async function migrationsApplied(db: Db, migrations = loadMigrations()): Promise<boolean> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
  return rows[0].n >= migrations.length;
}
