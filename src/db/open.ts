import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Config } from '../config.js';
import type { Db } from './db.js';
import { openPGlite } from './pglite.js';
import { openPostgres } from './postgres.js';

/** PostgreSQL when DATABASE_URL is set, else the embedded database in `<dataDir>/pgdata`. */
export async function openDatabase(config: Config): Promise<Db> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl);
  mkdirSync(config.dataDir, { recursive: true });
  return openPGlite({ dataDir: join(config.dataDir, 'pgdata') });
}
