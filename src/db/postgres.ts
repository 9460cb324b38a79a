// PostgreSQL server through node-postgres: the production database, shared by any number of api
// and worker processes.
import pg from 'pg';
import { from as copyStream } from 'pg-copy-streams';
import type { CopyData, Db, QueryOptions, QueryResult, TransactionOptions, Tx } from './db.js';
import { TYPE_OIDS, parseInt8 } from './db.js';
import { toDbError } from './errors.js';

const types = {
  getTypeParser(oid: number, format?: any) {
    if (oid === TYPE_OIDS.int8) return parseInt8;
    return pg.types.getTypeParser(oid, format);
  },
};

/** How soon a lost LISTEN connection is opened again (and again, while the server is away). */
const RELISTEN_MS = 500;

const listenStatement = (channel: string) => `LISTEN "${channel.replace(/"/g, '')}"`;

export async function openPostgres(url: string, options: { max?: number } = {}): Promise<Db> {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, types: types as any });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  await pool.query('select 1');
  return new PostgresDb(pool, url);
}

function wrap(client: pg.Pool | pg.PoolClient): Tx {
  return {
    async query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>> {
      try {
        // node-postgres prepares a named statement once per connection and reuses its plan.
        const r = options?.name
          ? await client.query({ name: options.name, text: sql, values: params as any[] })
          : await client.query(sql, params as any[]);
        return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
      } catch (err) {
        throw toDbError(err, options?.name);
      }
    },
    async exec(sql: string) {
      try {
        await client.query(sql);
      } catch (err) {
        throw toDbError(err);
      }
    },
    async copyFrom(table: string, columns: readonly string[], rows: CopyData) {
      // A pool lends one connection for the copy; a transaction's client copies in the transaction.
      const conn = client instanceof pg.Pool ? await client.connect().catch((err) => Promise.reject(toDbError(err))) : client;
      try {
        await new Promise<void>((resolve, reject) => {
          const stream = conn.query(copyStream(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
          stream.on('finish', resolve);
          stream.on('error', reject);
          // One chunk: pg-copy-streams writes each chunk to the socket as a message of its own.
          stream.end(typeof rows === 'string' ? rows : Buffer.concat(rows));
        });
      } catch (err) {
        throw toDbError(err);
      } finally {
        if (conn !== client) (conn as pg.PoolClient).release();
      }
    },
  };
}

class PostgresDb implements Db {
  readonly kind = 'postgres' as const;
  private readonly direct: Tx;
  /** The dedicated LISTEN connection: being opened, or open. */
  private listener: Promise<pg.Client> | null = null;
  private relistenTimer: NodeJS.Timeout | null = null;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private closing: Promise<void> | null = null;

  constructor(private readonly pool: pg.Pool, private readonly url: string) {
    this.direct = wrap(pool);
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

  async transaction<T>(fn: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const client = await this.pool.connect().catch((err) => Promise.reject(toDbError(err)));
    try {
      // The transaction's settings travel with its BEGIN: one round trip.
      await client.query(`BEGIN${options.planOnce ? '; SET LOCAL plan_cache_mode = force_generic_plan' : ''}${options.asyncCommit ? '; SET LOCAL synchronous_commit = off' : ''}`);
      const result = await fn(wrap(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      // fn's own errors pass unchanged; a failed BEGIN or COMMIT is the driver's.
      throw toDbError(err);
    } finally {
      client.release();
    }
  }

  async exclusively<T>(lock: string, fn: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect().catch((err) => Promise.reject(toDbError(err)));
    let broken: Error | undefined;
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [lock]);
      try {
        return await fn();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lock]).catch((err) => (broken = err));
      }
    } catch (err) {
      throw toDbError(err);
    } finally {
      // A connection whose unlock failed may still hold the lock: closed, not returned to the pool.
      client.release(broken);
    }
  }

  poolStats() {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  /**
   * One dedicated connection carries every LISTEN of this process. When it ends (the server
   * restarted, a network blip, an idle-session reaper) it is opened again and every channel is
   * listened to again: otherwise token revocations (C4.7) would reach this process only through its
   * cache's TTL, and the webhook workers only through their poll, for the rest of its life.
   */
  async listen(channel: string, onMessage: (payload: string) => void) {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      try {
        await (await this.listenerClient()).query(listenStatement(channel));
      } catch (err) {
        this.handlers.delete(channel);
        throw err;
      }
    }
    set.add(onMessage);
    return async () => {
      set!.delete(onMessage);
    };
  }

  private listenerClient(): Promise<pg.Client> {
    this.listener ??= this.openListener().catch((err) => {
      this.listener = null;
      throw err;
    });
    return this.listener;
  }

  private async openListener(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url });
    let open = false;
    client.on('error', () => {}); // 'end' follows
    client.on('end', () => {
      if (open) this.listenerLost();
    });
    client.on('notification', (msg) => {
      for (const handler of this.handlers.get(msg.channel) ?? []) handler(msg.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(listenStatement(channel));
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    open = true;
    return client;
  }

  private listenerLost() {
    this.listener = null;
    this.scheduleRelisten();
  }

  private scheduleRelisten() {
    if (this.closing || this.relistenTimer) return;
    this.relistenTimer = setTimeout(() => {
      this.relistenTimer = null;
      if (this.closing) return;
      this.listenerClient().catch(() => this.scheduleRelisten());
    }, RELISTEN_MS);
    this.relistenTimer.unref();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.relistenTimer) clearTimeout(this.relistenTimer);
      const listener = await this.listener?.catch(() => null);
      await listener?.end().catch(() => {});
      await this.pool.end();
    })();
    return this.closing;
  }

}
