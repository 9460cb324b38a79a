import { join } from 'node:path';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import type { Config } from '../config.js';
import type { Db } from './db.js';
import { openPGlite } from './pglite.js';
import { openPostgres } from './postgres.js';

export class DataDirInUseError extends Error {}

/** PostgreSQL when DATABASE_URL is set, else the embedded database in `<dataDir>/pgdata`. */
export async function openDatabase(config: Config): Promise<Db> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl);
  mkdirSync(config.dataDir, { recursive: true });
  const release = lockDataDir(config.dataDir);
  try {
    const db = await openPGlite({ dataDir: join(config.dataDir, 'pgdata') });
    const close = db.close.bind(db);
    db.close = async () => {
      await close();
      release();
    };
    return db;
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * The embedded database belongs to one process. PGlite's own `postmaster.pid` cannot keep a second
 * process out (every PGlite reports the same pid), so we hold a lock file naming our pid; a lock
 * left by a process that no longer runs (killed) is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, 'svc.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err: any) {
      if (err.code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(file, 'utf8'));
      if (pid && pid !== process.pid && isRunning(pid)) {
        throw new DataDirInUseError(`the embedded database in ${dataDir} is in use by process ${pid}; run one process per data dir, or use DATABASE_URL`);
      }
      rmSync(file, { force: true });
    }
  }
  throw new DataDirInUseError(`could not lock ${dataDir}`);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err: any) {
    return err.code === 'EPERM';
  }
}
