// INSERT and UPDATE statements built from a row object, for repositories: the column list and the
// `$n` placeholders come from the object's keys, so a wide row (an order has thirty-odd columns)
// is written by name, never as a run of positional parameters to keep in step by hand.
//
// Only names are written into the SQL text, and each is checked against IDENTIFIER first; every
// value travels as a parameter. Names come from our own code (a row type's keys), never from a
// request, but the check makes that a rule rather than a hope.
import { createHash } from 'node:crypto';
import type { Queryable } from './db.js';

/**
 * The largest value an `integer` column holds (stock, quantities, a billing interval count): the
 * routes take counts up to it, giving stock back stops there (src/orders/stock.ts), and a number
 * from outside beyond it is refused or read as unknown before it reaches such a column.
 */
export const INT4_MAX = 2_147_483_647;

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
/** A cast is a type name such as jsonb, numeric, uuid, uuid[] or timestamptz. */
const CAST = /^[a-z_][a-z0-9_ ]*(\[\])?$/;

/** Column values by column name. `undefined` leaves the column out (its default, or unchanged). */
export type Row = Record<string, unknown>;

export interface WriteOptions {
  /**
   * Per-column casts written after the placeholder (`$3::jsonb`). A `json` or `jsonb` column's
   * value is sent as JSON text (`JSON.stringify`), null as SQL NULL.
   */
  casts?: Record<string, string>;
  /** A RETURNING list, e.g. `*` or `id, (xmax = 0) AS inserted`; written as given (code, not input). */
  returning?: string;
  /**
   * A named statement (planned once per connection, db.ts QueryOptions): `true` derives a stable
   * name from the table and the statement text, so each column set gets its own.
   */
  name?: string | true;
}

export interface InsertOptions extends WriteOptions {
  /** What follows VALUES, e.g. `ON CONFLICT (app_id, store_id) DO NOTHING` (code, not input). */
  onConflict?: string;
}

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return name;
}

/**
 * A json or jsonb column's value that is already JSON text (serialised once for several uses): sent
 * as it is rather than serialised again.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * A value as PostgreSQL's text input for it, where the value travels as text rather than as a bound
 * parameter (PGlite's EXECUTE literals, `sqlLiteral`; COPY rows, copy-text.ts): null for SQL NULL,
 * a finite number or a bigint as its digits, a boolean as true/false, a Date in ISO 8601, JsonText
 * as it is, and any other object as its JSON.
 */
export function valueText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('non-finite number in a statement value');
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof JsonText) return value.text;
  return JSON.stringify(value);
}

/** Placeholder and parameter of one column's value. */
function bind(params: unknown[], column: string, value: unknown, casts: Record<string, string> | undefined): string {
  const cast = casts?.[column];
  if (cast !== undefined && !CAST.test(cast)) throw new Error(`not a type name: ${JSON.stringify(cast)}`);
  const json = cast === 'json' || cast === 'jsonb';
  params.push(value instanceof JsonText ? value.text : json && value !== null ? JSON.stringify(value) : value);
  return `$${params.length}${cast ? `::${cast}` : ''}`;
}

function defined(row: Row): [string, unknown][] {
  return Object.entries(row).filter(([, v]) => v !== undefined).map(([k, v]) => [identifier(k), v]);
}

function statementName(kind: 'ins' | 'upd', table: string, sql: string, name: string | true | undefined): string | undefined {
  if (name !== true) return name;
  const hash = createHash('sha1').update(sql).digest('hex').slice(0, 10);
  return `${kind}_${table}_${hash}`.slice(0, 63);
}

/** The SQL and parameters of `INSERT INTO table (a, b, ...) VALUES ($1, $2, ...)`, for tests and callers that batch. */
export function insertSql(table: string, row: Row, options: InsertOptions = {}): { sql: string; params: unknown[]; name: string | undefined } {
  const entries = defined(row);
  if (!entries.length) throw new Error(`insert into ${table} without columns`);
  const params: unknown[] = [];
  const values = entries.map(([column, value]) => bind(params, column, value, options.casts));
  const sql = `INSERT INTO ${identifier(table)} (${entries.map(([c]) => c).join(', ')}) VALUES (${values.join(', ')})`
    + (options.onConflict ? ` ${options.onConflict}` : '')
    + (options.returning ? ` RETURNING ${options.returning}` : '');
  return { sql, params, name: statementName('ins', table, sql, options.name) };
}

/** `INSERT INTO table (...) VALUES (...)` of one row; the returned rows when `returning` is given. */
export async function insertRow<T = Record<string, any>>(q: Queryable, table: string, row: Row, options: InsertOptions = {}) {
  const { sql, params, name } = insertSql(table, row, options);
  return q.query<T>(sql, params, name ? { name } : undefined);
}

/**
 * `INSERT INTO table (...) VALUES (...), (...), ...` of several rows with the same columns (the
 * first row's), in one statement: one round trip for a batch. `params` continues the numbering of
 * a statement that already has parameters (two inserts in one statement, joined by WITH).
 */
export function insertRowsSql(table: string, rows: readonly Row[], options: InsertOptions = {}, params: unknown[] = []): { sql: string; params: unknown[] } {
  if (!rows.length) throw new Error(`insert into ${table} without rows`);
  const columns = defined(rows[0]).map(([c]) => c);
  const tuples = rows.map((row) => {
    if (Object.keys(row).some((k) => row[k] !== undefined && !columns.includes(k))) throw new Error(`insert into ${table}: rows with different columns`);
    return `(${columns.map((c) => bind(params, c, row[c] ?? null, options.casts)).join(', ')})`;
  });
  const sql = `INSERT INTO ${identifier(table)} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`
    + (options.onConflict ? ` ${options.onConflict}` : '')
    + (options.returning ? ` RETURNING ${options.returning}` : '');
  return { sql, params };
}

export async function insertRows(q: Queryable, table: string, rows: readonly Row[], options: InsertOptions = {}) {
  const { sql, params } = insertRowsSql(table, rows, options);
  return q.query(sql, params);
}

/** The SQL and parameters of `UPDATE table SET a = $1, ... WHERE k = $n AND ...`. */
export function updateSql(table: string, where: Row, changes: Row, options: WriteOptions = {}): { sql: string; params: unknown[]; name: string | undefined } {
  const sets = defined(changes);
  const keys = defined(where);
  if (!sets.length) throw new Error(`update of ${table} without changes`);
  if (!keys.length) throw new Error(`update of ${table} without a WHERE`);
  const params: unknown[] = [];
  const set = sets.map(([column, value]) => `${column} = ${bind(params, column, value, options.casts)}`);
  const cond = keys.map(([column, value]) => (value === null ? `${column} IS NULL` : `${column} = ${bind(params, column, value, options.casts)}`));
  const sql = `UPDATE ${identifier(table)} SET ${set.join(', ')} WHERE ${cond.join(' AND ')}`
    + (options.returning ? ` RETURNING ${options.returning}` : '');
  return { sql, params, name: statementName('upd', table, sql, options.name) };
}

/**
 * `UPDATE table SET <changes> WHERE <where>`: each key of `where` an equality (`IS NULL` for null),
 * joined with AND. Refuses an empty WHERE: an update of every row is never built by accident.
 */
export async function updateRow<T = Record<string, any>>(q: Queryable, table: string, where: Row, changes: Row, options: WriteOptions = {}) {
  const { sql, params, name } = updateSql(table, where, changes, options);
  return q.query<T>(sql, params, name ? { name } : undefined);
}
