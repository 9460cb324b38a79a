// One small database interface over two drivers: the embedded PGlite and a PostgreSQL server
// (node-postgres). The SQL is the same for both; only connection handling differs.

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface QueryOptions {
  /**
   * Name of a statement on a hot path: planned once per connection and reused, instead of being
   * planned on every call. Give each distinct SQL text its own name.
   */
  name?: string;
}

export interface Queryable {
  query<T = Record<string, any>>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/**
 * Bulk loading: rows into a table through `COPY table (columns) FROM STDIN`, in text format
 * (src/db/copy-text.ts makes the lines). On a Db outside a transaction the copy is its own statement.
 */
export interface Copyable {
  /** `rows`: the lines as one text, or as UTF-8 chunks sent in order (each ending on a whole line or not: COPY reads a stream). */
  copyFrom(table: string, columns: readonly string[], rows: CopyData): Promise<void>;
}

export type CopyData = string | readonly Uint8Array[];

export interface Tx extends Queryable, Copyable {}

export interface TransactionOptions {
  /**
   * Plan each named statement once (`plan_cache_mode = force_generic_plan` for this transaction).
   * PostgreSQL plans a prepared statement afresh on every execution when it judges that the
   * parameters' values may change the plan; in the transactions marked so (order placement,
   * webhook fan-out) it did, and planning cost more than running the statements (docs/decisions.md).
   */
  planOnce?: boolean;
  /**
   * Commit without waiting for the WAL flush (`synchronous_commit = off`, PostgreSQL only): for
   * work that a database crash may forget and that is then simply done again.
   */
  asyncCommit?: boolean;
}

export interface Db extends Queryable, Copyable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Run `fn` in one transaction: committed when it resolves, rolled back when it throws.
   * Never do network I/O inside: on PGlite a transaction blocks every other query.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Run `fn` while no other process of the deployment runs anything under the same `lock` name: a
   * PostgreSQL session advisory lock, held on a connection of its own while `fn` uses the others,
   * and released with it (or with the connection, when the process dies). For first-start work
   * longer than one transaction (the demo data). The embedded database has one process (its data
   * dir is locked, src/db/open.ts): there `fn` simply runs.
   */
  exclusively<T>(lock: string, fn: () => Promise<T>): Promise<T>;
  /** LISTEN on a channel; resolves to an unsubscribe function. */
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /** Connection pool use (PostgreSQL; the embedded database has no pool). For /metrics. */
  poolStats?(): { total: number; idle: number; waiting: number };
}

/**
 * A condition to AND into a statement's WHERE that makes it commit without waiting for the WAL
 * flush (`synchronous_commit` off for its transaction only), on PostgreSQL: a disk flush saved per
 * statement, for writes a database crash may forget (webhook queue bookkeeping, run records); a
 * transaction says the same with `TransactionOptions.asyncCommit`. Never on PGlite: there,
 * asynchronous commit loses acknowledged writes on a process kill (src/db/pglite.ts).
 */
export function asyncCommit(db: Pick<Db, 'kind'>): string {
  return db.kind === 'postgres' ? `(SELECT set_config('synchronous_commit', 'off', true)) = 'off'` : 'true';
}

/** Postgres type OIDs whose text form both drivers must parse the same way. */
export const TYPE_OIDS = { int8: 20, numeric: 1700 } as const;

/** int8 values here are counters, ids and minor-unit money: all far below 2^53. */
export function parseInt8(value: string): number {
  return Number(value);
}
