// The embedded database. PGlite runs PostgreSQL in WebAssembly in this process, with its files in
// the data dir. It is for one process on one machine (README "Embedded database").
import { PGlite } from '@electric-sql/pglite';
import type { CopyData, Db, QueryOptions, QueryResult, TransactionOptions, Tx } from './db.js';
import { TYPE_OIDS, parseInt8 } from './db.js';
import { seedDataDirFromTemplate } from './pglite-template.js';
import { valueText } from './sql.js';
import { toDbError } from './errors.js';

// PGlite's own defaults start PostgreSQL with `-F` (fsync off). We keep every other default and
// drop that flag, with synchronous_commit on: a commit's WAL is written before it is acknowledged.
//
// What that does and does not buy (checked against @electric-sql/pglite 0.5.16, tested by
// test/embedded-durability.test.ts):
// - Process crash (SIGKILL, OOM kill): safe. The data dir is mounted with emscripten's NODEFS,
//   whose writes are plain fs.writeSync/pwrite calls with no buffering in JS, and a synchronous
//   commit writes its WAL before returning. The WAL is then in the OS page cache, which outlives
//   the process; on reopen PostgreSQL replays it. (PGlite's `-F` defaults pass the same test:
//   `-F` only skips fsync calls, the WAL write still happens at commit.)
// - Power loss or OS crash: NOT guaranteed. NODEFS has no fsync stream op and the fdatasync
//   syscall is a stub, so PostgreSQL's fsync/fdatasync never reach the disk (strace: zero
//   fsync/fdatasync syscalls with fsync=on). The flags are kept so this becomes real should PGlite
//   ever forward fsync; until then, use the PostgreSQL driver where power-loss durability matters.
// - Never set synchronous_commit=off here: single-user PostgreSQL has no WAL writer, so commits
//   then sit in WAL buffers and a SIGKILL lost acknowledged writes, even the CREATE TABLE.
// - A SIGKILL leaves `postmaster.pid` in the data dir. No cleanup is needed: every PGlite instance
//   has the WASM pid 42 (the file says -42, single-user mode), which PostgreSQL takes for its own
//   stale file and replaces. The flip side: the file does not keep a second process out of a data
//   dir in use (one opened and read it while another was writing), so one process per data dir is
//   up to us (README "Embedded database").
const DURABLE_START_PARAMS = [
  '--single', '-O', '-j',
  '-c', 'search_path=public',
  '-c', 'exit_on_error=false',
  '-c', 'log_checkpoints=false',
  '-c', 'max_worker_processes=0',
  '-c', 'max_parallel_workers=0',
  '-c', 'max_parallel_workers_per_gather=0',
  '-c', 'io_method=sync',
  '-c', 'max_parallel_maintenance_workers=0',
  '-c', 'fsync=on',
  '-c', 'synchronous_commit=on',
  '-c', 'full_page_writes=on',
];

export interface PGliteOptions {
  /** Directory of the database files; omitted for an in-memory database (tests). */
  dataDir?: string;
  /** A tarball from `dumpDataDir` to start from (tests clone a migrated template this way). */
  loadDataDir?: Blob;
}

export async function openPGlite(options: PGliteOptions): Promise<Db> {
  if (options.dataDir && !options.loadDataDir) seedDataDirFromTemplate(options.dataDir);
  const pg = await PGlite.create({
    dataDir: options.dataDir,
    loadDataDir: options.loadDataDir,
    relaxedDurability: false,
    startParams: options.dataDir ? DURABLE_START_PARAMS : undefined,
    parsers: { [TYPE_OIDS.int8]: parseInt8 },
  });
  return new PGliteDb(pg);
}

type PGliteTx = { query: PGlite['query']; exec: PGlite['exec'] };

function wrap(q: PGliteTx, prepared: Map<string, Promise<unknown>>): Tx {
  return {
    async query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>> {
      try {
        const r = options?.name
          ? await queryPrepared<T>(q, prepared, options.name, sql, params ?? [])
          : await q.query<T>(sql, params as any[]);
        return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
      } catch (err) {
        // PGlite's errors carry the query and its parameters (src/db/errors.ts).
        throw toDbError(err, options?.name);
      }
    },
    async exec(sql: string) {
      try {
        await q.exec(sql);
      } catch (err) {
        throw toDbError(err);
      }
    },
    async copyFrom(table: string, columns: readonly string[], rows: CopyData) {
      // PGlite takes COPY's data as a blob, read from its virtual file `/dev/blob`.
      try {
        await q.query(`COPY ${table} (${columns.join(', ')}) FROM '/dev/blob'`, [], { blob: new Blob(typeof rows === 'string' ? [rows] : (rows as unknown as BlobPart[])) });
      } catch (err) {
        throw toDbError(err);
      }
    },
  };
}

/**
 * PGlite sends every query as an unnamed statement, so PostgreSQL plans it on every call, and
 * planning in WebAssembly is slow (about a third of a list query's time). A named statement is
 * prepared once with SQL `PREPARE` and run with `EXECUTE name(literal, ...)`: EXECUTE takes no bound
 * parameters, so the values are written as SQL literals by `sqlLiteral`, which quotes every value
 * (standard_conforming_strings is on: a doubled quote is the only escape a string needs).
 */
async function queryPrepared<T>(q: PGliteTx, prepared: Map<string, Promise<unknown>>, name: string, sql: string, params: unknown[]) {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid statement name ${name}`);
  // The preparation itself is shared: two first uses at once (parallel queries of one request)
  // would otherwise both PREPARE, and the second fail with "prepared statement already exists".
  let ready = prepared.get(name);
  if (!ready) {
    ready = q.query(`PREPARE ${name} AS ${sql}`);
    prepared.set(name, ready);
    ready.catch(() => prepared.delete(name));
  }
  await ready;
  return q.query<T>(params.length ? `EXECUTE ${name}(${params.map(sqlLiteral).join(', ')})` : `EXECUTE ${name}`);
}

export function sqlLiteral(value: unknown): string {
  const text = valueText(value);
  if (text === null) return 'NULL';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return text;
  if (text.includes('\0')) throw new Error('NUL byte in a statement parameter');
  return `'${text.replace(/'/g, "''")}'`;
}

class PGliteDb implements Db {
  readonly kind = 'pglite' as const;
  private readonly direct: Tx;
  private closing: Promise<void> | null = null;
  // Prepared statements belong to the one PGlite session, inside transactions or not.
  private readonly prepared = new Map<string, Promise<unknown>>();

  constructor(readonly pg: PGlite) {
    this.direct = wrap(pg, this.prepared);
  }

  query<T>(sql: string, params?: unknown[], options?: QueryOptions) {
    return this.direct.query<T>(sql, params, options);
  }

  exec(sql: string) {
    return this.direct.exec(sql);
  }

  copyFrom(table: string, columns: readonly string[], rows: CopyData) {
    return this.direct.copyFrom(table, columns, rows);
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    // fn's own errors pass unchanged; a failed BEGIN or COMMIT is the driver's. (`asyncCommit`
    // is PostgreSQL's: the embedded database is written by this process alone.)
    return this.pg
      .transaction(async (tx) => {
        if (options.planOnce) await tx.exec('SET LOCAL plan_cache_mode = force_generic_plan');
        return fn(wrap(tx, this.prepared));
      })
      .catch((err) => Promise.reject(toDbError(err)));
  }

  /** One process per embedded database (src/db/open.ts locks its data dir): nobody to exclude. */
  exclusively<T>(_lock: string, fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  async listen(channel: string, onMessage: (payload: string) => void) {
    const unsubscribe = await this.pg.listen(channel, onMessage);
    return async () => {
      if (!this.pg.closed) await unsubscribe();
    };
  }

  /** Safe to call from several exit paths at once: the database is closed exactly once. */
  close(): Promise<void> {
    this.closing ??= this.pg.closed ? Promise.resolve() : this.pg.close();
    return this.closing;
  }

  /** The whole database as a tarball (tests make per-file copies of a migrated template). */
  dumpDataDir() {
    return this.pg.dumpDataDir('none');
  }
}

export function isPGliteDb(db: Db): db is Db & { dumpDataDir(): Promise<File | Blob> } {
  return db.kind === 'pglite';
}
