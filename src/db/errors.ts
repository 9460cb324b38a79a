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
