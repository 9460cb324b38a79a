// Run records (C11.5) in the database (function_runs, migration 0012). The checkout's token is a
// bearer secret: it is stored sealed, apart from the input, and put back into the input on read,
// so the developer sees the run exactly as it happened and the table holds no usable token.
//
// The runs of one target at one checkout step share their input, and it is stored once for them
// (function_run_inputs, migration 0017): one ~2 KB jsonb row and its WAL instead of one per run.
// Runs recorded before that keep their input inline; every read takes whichever is there.
import type { Db, Queryable, Tx } from '../db/db.js';
import { copyLine } from '../db/copy-text.js';
import { JsonText } from '../db/sql.js';
import { uuidv7 } from '../ids.js';

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

/** function_runs' columns as insertRuns writes them, in COPY order. */
const RUN_COPY_COLUMNS = ['id', 'app_id', 'store_id', 'function_id', 'function_handle', 'target', 'status', 'error_type', 'error_message',
  'input_id', 'input_bytes', 'output', 'output_bytes', 'duration_ms', 'checkout_id', 'checkout_token_enc', 'created_at'] as const;
const INPUT_COPY_COLUMNS = ['id', 'created_at', 'input'] as const;

/**
 * Runs as the lines of the two COPYs that write them (src/db/copy-text.ts), encoded as UTF-8: the
 * inputs' rows and the runs' rows. Runs given the same input value (the same object or JsonText,
 * as runTarget gives a target's runs) at the same moment share one input row. The moment is part
 * of the key so that an input row's `created_at` is that of every run using it: retention relies
 * on it to take an input's runs together (deleteRunsBefore), and the erasure to find an input's
 * other runs (freedInputs).
 *
 * Encoded at once rather than when written: the run recorder keeps these bytes, outside the
 * JavaScript heap, where it kept the runs themselves (objects the garbage collector traced and
 * moved through every collection until the batch was written: hundreds of runs under load), and
 * the work is spread over the checkouts instead of falling on one turn.
 *
 * Every string must be storable (src/functions/runtime/storable-text.ts): the runtime's results are.
 */
export interface RunLines {
  inputs: Buffer;
  runs: Buffer;
}

export function runLines(runs: readonly NewRun[]): RunLines {
  let inputs = '';
  let rows = '';
  const inputIds = new Map<unknown, Map<number, string>>();
  for (const r of runs) {
    let inputId: string | null = null;
    if (r.input !== null && r.input !== undefined) {
      const at = r.createdAt.getTime();
      let atMoment = inputIds.get(r.input);
      if (!atMoment) inputIds.set(r.input, (atMoment = new Map()));
      inputId = atMoment.get(at) ?? null;
      if (!inputId) {
        inputId = uuidv7(at);
        atMoment.set(at, inputId);
        inputs += copyLine([inputId, r.createdAt, r.input instanceof JsonText ? r.input.text : JSON.stringify(r.input)]);
      }
    }
    rows += copyLine([r.id, r.appId, r.storeId, r.functionId, r.functionHandle, r.target, r.status, r.errorType, r.errorMessage,
      inputId, r.inputBytes, r.output === null || r.output === undefined ? null : JSON.stringify(r.output), r.outputBytes, r.durationMs, r.checkoutId,
      r.checkoutTokenSealed, r.createdAt]);
  }
  return { inputs: Buffer.from(inputs), runs: Buffer.from(rows) };
}

/**
 * Runs (`runLines`: one checkout's, or a recorder's batch of many) in one transaction of two COPYs,
 * the inputs, then the runs: written whole or not at all. Committed asynchronously on PostgreSQL
 * (asyncCommit): a database crash may forget the last fraction of a second of records, as a hard
 * kill of the service forgets the recorder's last 10 ms (docs/decisions.md). Given a transaction,
 * the copies are part of it.
 */
export async function writeRunLines(q: Db | Tx, lines: readonly RunLines[]): Promise<void> {
  const runs = lines.filter((l) => l.runs.length).map((l) => l.runs);
  if (!runs.length) return;
  const inputs = lines.filter((l) => l.inputs.length).map((l) => l.inputs);
  const write = async (tx: Tx) => {
    if (inputs.length) await tx.copyFrom('function_run_inputs', INPUT_COPY_COLUMNS, inputs);
    await tx.copyFrom('function_runs', RUN_COPY_COLUMNS, runs);
  };
  if ('transaction' in q) await q.transaction(write, { asyncCommit: true });
  else await write(q);
}

/** Runs written at once (`runLines`, `writeRunLines`). */
export async function insertRuns(q: Db | Tx, runs: readonly NewRun[]): Promise<void> {
  if (runs.length) await writeRunLines(q, [runLines(runs)]);
}

export interface RunFilter {
  appId: string;
  /** A function's handle, or null for every function of the app (`all`). */
  handle: string | null;
  status: RunStatus | null;
}

const WHERE = `app_id = $1 AND ($2::text IS NULL OR function_handle = $2) AND ($3::text IS NULL OR status = $3)`;
const params = (f: RunFilter) => [f.appId, f.handle, f.status];

const LOG_COLUMNS = ['id', 'app_id', 'store_id', 'function_id', 'function_handle', 'target', 'status', 'error_type', 'error_message',
  'input_bytes', 'output_bytes', 'duration_ms', 'checkout_token_enc', 'created_at'].map((c) => `r.${c}`).join(', ');
/** A whole record: its input is inline (runs recorded before migration 0017) or shared with the other runs of its target. */
const RUN_COLUMNS = `${LOG_COLUMNS}, coalesce(r.input, i.input) AS input, r.output`;
const RUNS_WITH_INPUTS = 'function_runs r LEFT JOIN function_run_inputs i ON i.id = r.input_id';

/** Newest first. `withBodies` false leaves input and output out of the query (the logs). */
export async function listRuns(q: Queryable, f: RunFilter, page: { limit: number; offset: number }, withBodies: boolean): Promise<RunRow[]> {
  // The page's ids first, from the index alone, then its rows: a deep page skips index entries,
  // not whole rows with their input and output (issue 15: 10,000 runs, any page under 50 ms).
  const { rows } = await q.query<RunRow>(
    `SELECT ${withBodies ? RUN_COLUMNS : LOG_COLUMNS} FROM ${withBodies ? RUNS_WITH_INPUTS : 'function_runs r'} WHERE r.id IN (
       SELECT id FROM function_runs WHERE ${WHERE} ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5)
     ORDER BY r.created_at DESC, r.id DESC`,
    [...params(f), page.limit, page.offset],
  );
  return rows;
}

export async function countRuns(q: Queryable, f: RunFilter): Promise<number> {
  const { rows } = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM function_runs WHERE ${WHERE}`, params(f));
  return rows[0].n;
}

export async function findRun(q: Queryable, appId: string, handle: string, runId: string): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM ${RUNS_WITH_INPUTS} WHERE r.app_id = $1 AND r.function_handle = $2 AND r.id = $3`,
    [appId, handle, runId],
  );
  return rows[0] ?? null;
}

/**
 * A DELETE of the input rows that the runs listed in the WITH query `gone` (its `id` and `input_id`)
 * were the last to use. An input's runs all have its `created_at` (insertRuns), so the others are
 * found through function_runs_age_idx. The statement's snapshot still shows the runs `gone` deletes
 * or empties, hence `NOT IN gone`. No new run ever points at an existing input, so nothing can
 * start using an input between this check and its deletion.
 */
const freedInputs = (gone: string) => `DELETE FROM function_run_inputs i
  WHERE i.id IN (SELECT input_id FROM ${gone})
    AND NOT EXISTS (SELECT 1 FROM function_runs r
                     WHERE r.created_at = i.created_at AND r.input_id = i.id AND r.id NOT IN (SELECT id FROM ${gone}))`;

/**
 * Retention (C11.5): runs go when webhook delivery bodies do, oldest first, and their inputs in the
 * same statement. A batch is about `batch` runs, taken up to and including the moment of the
 * batch-th oldest, so it always ends on a whole moment: an input's runs all have its moment
 * (insertRuns), so a batch holds all of an input's runs or none, and the inputs of the runs it
 * deletes can go without asking whether other runs use them (freedInputs' check, which for a
 * batch of thousands PostgreSQL plans as a scan of every run). Answers the runs deleted, which
 * may exceed `batch`; fewer than `batch` means none are left.
 */
export async function deleteRunsBefore(q: Queryable, cutoff: Date, batch: number): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `WITH last AS (
       SELECT created_at FROM function_runs WHERE created_at < $1 ORDER BY created_at OFFSET $2::int - 1 LIMIT 1),
     gone AS (
       DELETE FROM function_runs WHERE created_at < $1 AND created_at <= coalesce((SELECT created_at FROM last), $1)
       RETURNING input_id),
     freed AS (DELETE FROM function_run_inputs WHERE id IN (SELECT input_id FROM gone))
     SELECT count(*)::int AS n FROM gone`,
    [cutoff, batch],
  );
  return rows[0].n;
}

/**
 * Erasure of a redacted customer (C9, C11.5): the runs at these checkouts lose their input, their
 * output (which may echo the input), their error message (which quotes the input's values as
 * often: CEL's "Cannot convert ada@example.com to a BigInt", "field not found: <a key from the
 * input>"; the error type stays) and the token; the record of the run stays. A target's runs
 * share a checkout, so their input goes with them; the check of freedInputs keeps it exact anyway.
 */
export async function eraseRunsAtCheckouts(q: Queryable, storeId: string, checkoutIds: readonly string[]): Promise<number> {
  if (!checkoutIds.length) return 0;
  const { rows } = await q.query<{ n: number }>(
    `WITH gone AS (
       SELECT id, input_id FROM function_runs WHERE store_id = $1 AND checkout_id = ANY($2::uuid[])),
     ${erasedRuns('gone')}
     SELECT count(*)::int AS n FROM gone`,
    [storeId, checkoutIds],
  );
  return rows[0].n;
}

/**
 * Erasure of a redacted customer (C9, C11.5) by what the runs hold rather than where they ran: the
 * store's runs whose input (inline or shared), output or error message names one of `emails`, in
 * any case, erased as eraseRunsAtCheckouts erases them. A checkout's email can change after its
 * functions ran (the buyer corrects it), and then the runs of its earlier steps hold an address
 * the checkout no longer has, out of reach of the look-up by checkout. An input shared by several
 * runs names the email for all of them, so they all go, and the input with them.
 *
 * Store-scoped through the store's checkouts: every run is recorded at one, function_runs has no
 * index by store (a cost on every recorded run, migration 0020), and this way the look-up reads
 * the store's runs (checkouts' store index, then function_runs_checkout_idx), not every store's.
 * A run whose checkout is gone was erased when its checkout was purged (checkouts.repo.ts).
 */
export async function eraseRunsNaming(q: Queryable, storeId: string, emails: readonly string[]): Promise<number> {
  if (!emails.length) return 0;
  // Inputs and outputs are searched as jsonb text, where a string is JSON-escaped; error messages as they are.
  const asJson = emails.map((e) => JSON.stringify(e).slice(1, -1));
  const { rows } = await q.query<{ n: number }>(
    `WITH needles AS (
       SELECT lower(json) AS json, lower(plain) AS plain FROM unnest($2::text[], $3::text[]) AS n(json, plain)),
     gone AS (
       SELECT r.id, r.input_id FROM function_runs r LEFT JOIN function_run_inputs i ON i.id = r.input_id
        WHERE r.store_id = $1 AND r.checkout_id IN (SELECT id FROM checkouts WHERE store_id = $1)
          AND EXISTS (SELECT 1 FROM needles
                       WHERE strpos(lower(coalesce(r.input, i.input)::text), needles.json) > 0
                          OR strpos(lower(r.output::text), needles.json) > 0
                          OR strpos(lower(r.error_message), needles.plain) > 0)),
     ${erasedRuns('gone')}
     SELECT count(*)::int AS n FROM gone`,
    [storeId, asJson, emails],
  );
  return rows[0].n;
}

/**
 * WITH queries that erase the runs listed in the WITH query `runs` (its `id` and `input_id`) as
 * eraseRunsAtCheckouts does: for it, and for the purge of abandoned checkouts, whose runs must not
 * keep the buyer's data once the checkout that leads the erasure to them is gone (checkouts.repo.ts).
 */
export const erasedRuns = (runs: string) => `emptied AS (
       UPDATE function_runs r SET input = NULL, input_id = NULL, output = NULL, error_message = NULL, checkout_token_enc = NULL
       FROM ${runs} WHERE r.id = ${runs}.id),
     freed AS (${freedInputs(runs)})`;
