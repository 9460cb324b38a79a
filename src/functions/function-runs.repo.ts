// Run records (C11.5) in the database (function_runs, migration 0012). The checkout's token is a
// bearer secret: it is stored sealed, apart from the input, and put back into the input on read,
// so the developer sees the run exactly as it happened and the table holds no usable token.
import type { Queryable } from '../db/db.js';
import { insertRows, JsonText } from '../db/sql.js';

export const RUN_STATUSES = ['success', 'failure'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export interface NewRun {
  id: string;
  appId: string;
  storeId: string;
  functionId: string;
  functionHandle: string;
  target: string;
  status: RunStatus;
  errorType: string | null;
  errorMessage: string | null;
  /** The input with the checkout's token taken out (see `withoutToken`); or that as JSON text, serialised once for a target's runs. */
  input: unknown | JsonText;
  inputBytes: number;
  output: unknown;
  outputBytes: number;
  durationMs: number;
  checkoutId: string | null;
  checkoutTokenSealed: string | null;
  createdAt: Date;
}

export interface RunRow {
  id: string;
  app_id: string;
  store_id: string;
  function_id: string;
  function_handle: string;
  target: string;
  status: RunStatus;
  error_type: string | null;
  error_message: string | null;
  input: unknown;
  input_bytes: number;
  output: unknown;
  output_bytes: number;
  duration_ms: number;
  checkout_token_enc: string | null;
  created_at: Date;
}

/** Several runs (one checkout's) in one statement: recording adds one round trip, not one per run. */
export async function insertRuns(q: Queryable, runs: readonly NewRun[]): Promise<void> {
  if (!runs.length) return;
  const rows = runs.map((r) => ({
    id: r.id, app_id: r.appId, store_id: r.storeId, function_id: r.functionId, function_handle: r.functionHandle, target: r.target,
    status: r.status, error_type: r.errorType, error_message: r.errorMessage, input: r.input, input_bytes: r.inputBytes,
    output: r.output, output_bytes: r.outputBytes, duration_ms: r.durationMs, checkout_id: r.checkoutId,
    checkout_token_enc: r.checkoutTokenSealed, created_at: r.createdAt,
  }));
  await insertRows(q, 'function_runs', rows, { casts: { input: 'jsonb', output: 'jsonb' } });
}

export interface RunFilter {
  appId: string;
  /** A function's handle, or null for every function of the app (`all`). */
  handle: string | null;
  status: RunStatus | null;
}

const WHERE = `app_id = $1 AND ($2::text IS NULL OR function_handle = $2) AND ($3::text IS NULL OR status = $3)`;
const params = (f: RunFilter) => [f.appId, f.handle, f.status];

/** Newest first. `withBodies` false leaves input and output out of the query (the logs). */
export async function listRuns(q: Queryable, f: RunFilter, page: { limit: number; offset: number }, withBodies: boolean): Promise<RunRow[]> {
  const columns = withBodies
    ? '*'
    : 'id, app_id, store_id, function_id, function_handle, target, status, error_type, error_message, input_bytes, output_bytes, duration_ms, checkout_token_enc, created_at';
  // The page's ids first, from the index alone, then its rows: a deep page skips index entries,
  // not whole rows with their input and output (issue 15: 10,000 runs, any page under 50 ms).
  const { rows } = await q.query<RunRow>(
    `SELECT ${columns} FROM function_runs WHERE id IN (
       SELECT id FROM function_runs WHERE ${WHERE} ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5)
     ORDER BY created_at DESC, id DESC`,
    [...params(f), page.limit, page.offset],
  );
  return rows;
}

export async function countRuns(q: Queryable, f: RunFilter): Promise<number> {
  const { rows } = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM function_runs WHERE ${WHERE}`, params(f));
  return rows[0].n;
}

export async function findRun(q: Queryable, appId: string, handle: string, runId: string): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>('SELECT * FROM function_runs WHERE app_id = $1 AND function_handle = $2 AND id = $3', [appId, handle, runId]);
  return rows[0] ?? null;
}

/** Retention (C11.5): runs go when webhook delivery bodies do. */
export async function deleteRunsBefore(q: Queryable, cutoff: Date, batch: number): Promise<number> {
  const { rowCount } = await q.query(
    'DELETE FROM function_runs WHERE id IN (SELECT id FROM function_runs WHERE created_at < $1 LIMIT $2::int)',
    [cutoff, batch],
  );
  return rowCount;
}
