import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createFileExclusively, readCreatedFile } from '../exclusive-file.js';
import type { Config } from '../config.js';
import type { Db } from './db.js';
import { openPGlite } from './pglite.js';
import { openPostgres } from './postgres.js';

export class DataDirInUseError extends Error {}

/** PostgreSQL when DATABASE_URL is set, else the embedded database in `<dataDir>/pgdata`. */
export async function openDatabase(config: Config): Promise<Db> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl);
  // Only its owner may enter it (as PostgreSQL requires of its own data directory): it holds the
  // database, the development secret and uploads. A data dir made here is made so; an existing one
  // is left as the operator made it, but the database's own directory is closed below.
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const release = lockDataDir(config.dataDir);
  try {
    const pgdata = join(config.dataDir, 'pgdata');
    mkdirSync(pgdata, { recursive: true, mode: 0o700 });
    // The cluster's files come from a template whose files PGlite wrote world-writable (0666), and
    // an install before this kept them so: closing the directory keeps every other user out of them.
    chmodSync(pgdata, 0o700);
    const db = await openPGlite({ dataDir: pgdata });
    chmodSync(pgdata, 0o700); // the template's copy may have brought its own mode
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
 * left by a process that no longer runs (killed) is taken over. Processes starting together on one
 * data dir: the lock file appears complete (createFileExclusively), so none of them reads it empty
 * and takes it for a dead process's; and of several taking over one dead process's lock, only the
 * one that moved that very file away goes on (takeOverStaleLock).
 */
export function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, 'svc.lock');
  const mine = `${process.pid} ${randomBytes(6).toString('hex')}`;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createFileExclusively(file, mine)) {
      // Removed only while it is still ours (never another process's lock that replaced it).
      return () => {
        if (readLock(file) === mine) rmSync(file, { force: true });
      };
    }
    const holder = readLock(file);
    if (holder === null) continue; // released meanwhile
    const pid = Number(holder.split(' ')[0]);
    if (pid && pid !== process.pid && isRunning(pid)) {
      throw new DataDirInUseError(`the embedded database in ${dataDir} is in use by process ${pid}; run one process per data dir, or use DATABASE_URL`);
    }
    takeOverStaleLock(file, holder);
  }
  throw new DataDirInUseError(`could not lock ${dataDir}`);
}

/** The lock file's content (`pid nonce`; a bare pid from older builds), or null when there is none. */
function readLock(file: string): string | null {
  try {
    return readCreatedFile(file);
  } catch (err: any) {
    if (err.code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Removes the dead holder's lock, and only that: moved aside under a name of our own, it is checked
 * to be the one judged stale. When another process took it over in between, the file moved is that
 * process's live lock, and it goes back in place.
 */
function takeOverStaleLock(file: string, staleHolder: string): void {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(file, aside);
  } catch (err: any) {
    if (err.code === 'ENOENT') return; // another process moved it first
    throw err;
  }
  if (readLock(aside) !== staleHolder) {
    try {
      linkSync(aside, file);
    } catch (err: any) {
      if (err.code !== 'EEXIST') throw err;
    }
  }
  rmSync(aside, { force: true });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err: any) {
    return err.code === 'EPERM';
  }
}
