// Database errors as the rest of the service sees them. The drivers' own errors carry the data a
// statement ran on: PGlite attaches the query text and its parameters (and a named statement's
// EXECUTE inlines the values into that text), PostgreSQL's `detail` repeats a conflicting key
// ("Key (email)=(alice@example.com) already exists"), and a conversion error quotes the bad value.
// Any of it in a log is customer data in a log, so both drivers rethrow a DbError that keeps what a
// caller or an operator needs, the SQLSTATE code, the constraint, table and column names, the
// statement name and the message, with quoted values taken out where PostgreSQL puts input in them.

export class DbError extends Error {
  override readonly name = 'DbError';
  /** SQLSTATE, e.g. 23505 (unique violation); undefined for errors that have none. */
  readonly code: string | undefined;
  readonly constraint: string | undefined;
  readonly table: string | undefined;
  readonly column: string | undefined;
  /** The named statement (QueryOptions.name) that failed, if it was one. */
  readonly statement: string | undefined;

  constructor(fields: { message: string; code?: string; constraint?: string; table?: string; column?: string; statement?: string }) {
    super(fields.message);
    this.code = fields.code;
    this.constraint = fields.constraint;
    this.table = fields.table;
    this.column = fields.column;
    this.statement = fields.statement;
  }
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * Data exceptions (class 22: `invalid input syntax for type uuid: "..."`), syntax errors (42601:
 * `at or near "..."`, which on PGlite may be an inlined value) and errors raised by PL/pgSQL (P0)
 * quote input. Integrity violations (class 23) and the other class 42 errors quote only names of
 * constraints, relations and columns, which help and are kept.
 */
function quotesInput(code: string | undefined): boolean {
  return code === undefined || code.startsWith('22') || code === '42601' || code.startsWith('P0') || code.startsWith('XX');
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A driver error as a DbError; anything else (our own errors, a connection refused) unchanged. */
export function toDbError(err: unknown, statement?: string): unknown {
  if (err instanceof DbError || !(err instanceof Error)) return err;
  const e = err as any;
  const code = typeof e.code === 'string' && SQLSTATE.test(e.code) ? (e.code as string) : undefined;
  // A PostgreSQL error (both drivers: `severity` and an SQLSTATE), or one PGlite decorated with the
  // statement it ran (`query`, `params`).
  if (!(code && 'severity' in e) && !('params' in e) && !('query' in e)) return err;
  const message = quotesInput(code) ? err.message.replace(/"[^"]*"/g, '"[REDACTED]"') : err.message;
  const wrapped = new DbError({ message, code, constraint: str(e.constraint), table: str(e.table), column: str(e.column), statement });
  Error.captureStackTrace(wrapped, toDbError);
  return wrapped;
}

// ---- what a caller asks of a database error ------------------------------------------------------
// The one place that knows SQLSTATE codes. Services ask "was this the unique index on the store's
// discount codes?" and turn the answer into their own error (a 409, a field error, a retry); they
// never compare codes themselves.

export type DbErrorKind = 'unique_violation' | 'foreign_key_violation' | 'check_violation' | 'not_null_violation' | 'data_exception';

const KINDS: Record<string, DbErrorKind> = {
  '23505': 'unique_violation',
  '23503': 'foreign_key_violation',
  '23514': 'check_violation',
  '23502': 'not_null_violation',
};

/** The kind of a database error, or null for any other error (ours, a lost connection, a bug). */
export function dbErrorKind(err: unknown): DbErrorKind | null {
  if (!(err instanceof DbError) || !err.code) return null;
  // Class 22: a value the column's type cannot hold (bad uuid or number text, out of range, too long).
  return KINDS[err.code] ?? (err.code.startsWith('22') ? 'data_exception' : null);
}

/**
 * Whether `err` is an integrity violation of `kind`, and, when `constraint` is given, of that
 * constraint. The message names the constraint too (integrity messages quote only names, never
 * values), for a driver that leaves the field empty.
 */
function violates(err: unknown, kind: DbErrorKind, constraint?: string): boolean {
  if (dbErrorKind(err) !== kind) return false;
  const e = err as DbError;
  return !constraint || e.constraint === constraint || e.message.includes(`"${constraint}"`);
}

/** 23505: a unique index or constraint refused the row (`constraint`: its name). */
export const isUniqueViolation = (err: unknown, constraint?: string) => violates(err, 'unique_violation', constraint);
/** 23503: the row names a parent that does not exist, or a parent still has children. */
export const isForeignKeyViolation = (err: unknown, constraint?: string) => violates(err, 'foreign_key_violation', constraint);
/** 23514: a CHECK constraint (or a trigger raising with that code, like the ledger's) refused the row. */
export const isCheckViolation = (err: unknown, constraint?: string) => violates(err, 'check_violation', constraint);
/** 23502: a NOT NULL column was given no value (`column`: its name). */
export function isNotNullViolation(err: unknown, column?: string): boolean {
  return dbErrorKind(err) === 'not_null_violation' && (!column || (err as DbError).column === column);
}
/** Class 22: a value its column's type cannot hold. */
export const isDataException = (err: unknown) => dbErrorKind(err) === 'data_exception';
