// Functions (C11) in the database: the functions apps declare (app_functions), their activation on
// each store (store_functions) and the run records (function_runs). Migration 0012.
import type { Queryable } from '../db/db.js';
import { insertRow, insertRows } from '../db/sql.js';
import { uuidv7 } from '../ids.js';
import type { FunctionTarget } from './runtime/index.js';

/** C11.2: at most this many active functions per target on one store. */
export const MAX_ACTIVE_PER_TARGET = 25;

/** A function as the manifest declares it, checked (src/functions/manifest-functions.ts). */
export interface DeclaredFunction {
  handle: string;
  target: FunctionTarget;
  title: string | null;
  expression: string;
  configuration: Record<string, unknown>;
}

export interface AppFunctionRow extends DeclaredFunction {
  id: string;
  app_id: string;
  position: number;
}

/** A function on a store, with what the merchant's list shows of its app. */
export interface StoreFunctionRow {
  id: string;
  store_id: string;
  app_id: string;
  app_handle: string;
  handle: string;
  target: FunctionTarget;
  title: string | null;
  expression: string;
  active: boolean;
  /** The merchant's, or else the manifest's. */
  configuration: Record<string, unknown>;
  activated_at: Date | null;
}

export const appFunctions = async (q: Queryable, appId: string): Promise<AppFunctionRow[]> =>
  (await q.query<AppFunctionRow>('SELECT id, app_id, handle, target, title, expression, configuration, position FROM app_functions WHERE app_id = $1 ORDER BY position', [appId])).rows;

/** Activations of one store are decided one at a time: the cap of 25 is counted under this lock. */
const lockStoreFunctions = (q: Queryable, storeId: string) => q.query('SELECT id FROM stores WHERE id = $1 FOR UPDATE', [storeId]);

/** Active functions per target on the store (targets with none are absent). */
async function activeCounts(q: Queryable, storeId: string): Promise<Map<string, number>> {
  const { rows } = await q.query<{ target: string; n: number }>(
    `SELECT f.target, count(*)::int AS n FROM store_functions s JOIN app_functions f ON f.id = s.app_function_id
      WHERE s.store_id = $1 AND s.active GROUP BY f.target`,
    [storeId],
  );
  return new Map(rows.map((r) => [r.target, r.n]));
}

/**
 * Activates every function of the app on the store, in declared order, while its target has room
 * (C11.2); the others are listed inactive. Each activated function moves to the end of the order.
 * Runs in the caller's transaction (installing the app): two reads and one write, however many
 * functions the app has.
 */
export async function activateAppFunctions(q: Queryable, appId: string, storeId: string, now: Date, only?: readonly string[]): Promise<void> {
  const declared = (await appFunctions(q, appId)).filter((f) => !only || only.includes(f.id));
  if (!declared.length) return;
  await lockStoreFunctions(q, storeId);
  const active = await activeCounts(q, storeId);
  const { rows } = await q.query<{ app_function_id: string }>(
    'SELECT app_function_id FROM store_functions WHERE store_id = $1 AND active AND app_function_id = ANY($2::uuid[])',
    [storeId, declared.map((f) => f.id)],
  );
  const already = new Set(rows.map((r) => r.app_function_id));
  const activations = declared.filter((f) => !already.has(f.id)).map((f) => {
    const admitted = (active.get(f.target) ?? 0) < MAX_ACTIVE_PER_TARGET;
    if (admitted) active.set(f.target, (active.get(f.target) ?? 0) + 1);
    // One instant for all: within it they run in declared order (ACTIVATION_ORDER).
    return {
      id: uuidv7(now.getTime()), store_id: storeId, app_function_id: f.id, active: admitted, configuration: null,
      activated_at: admitted ? now : null, created_at: now, updated_at: now,
    };
  });
  if (!activations.length) return;
  await insertRows(q, 'store_functions', activations, {
    casts: { configuration: 'jsonb' },
    onConflict: `ON CONFLICT (store_id, app_function_id) DO UPDATE SET active = EXCLUDED.active,
      activated_at = CASE WHEN EXCLUDED.active THEN EXCLUDED.activated_at ELSE store_functions.activated_at END, updated_at = EXCLUDED.updated_at`,
  });
}

/** Uninstalling: the app's functions stay listed on the store, inactive (C11.2). */
export async function deactivateAppFunctions(q: Queryable, appId: string, storeId: string, now: Date): Promise<void> {
  await q.query(
    `UPDATE store_functions SET active = false, updated_at = $3
      WHERE store_id = $2 AND active AND app_function_id IN (SELECT id FROM app_functions WHERE app_id = $1)`,
    [appId, storeId, now],
  );
}

/**
 * Keeps app_functions in step with the manifest (C11.1: at once, for every store): updates the
 * functions still declared, deletes the others (their activations go with them), and activates the
 * new ones on every store where the app is installed. A function whose target changed keeps its
 * place only where the new target has room.
 */
export async function syncAppFunctions(q: Queryable, appId: string, declared: readonly DeclaredFunction[], now: Date): Promise<void> {
  const existing = new Map((await appFunctions(q, appId)).map((f) => [f.handle, f]));
  const added: string[] = [];
  const retargeted: string[] = [];
  for (const [position, f] of declared.entries()) {
    const before = existing.get(f.handle);
    existing.delete(f.handle);
    if (!before) {
      const id = uuidv7(now.getTime());
      await insertRow(q, 'app_functions', {
        id, app_id: appId, handle: f.handle, target: f.target, title: f.title, expression: f.expression, configuration: f.configuration,
        position, created_at: now, updated_at: now,
      }, { casts: { configuration: 'jsonb' } });
      added.push(id);
      continue;
    }
    if (before.target !== f.target) retargeted.push(before.id);
    await q.query(
      `UPDATE app_functions SET target = $2, title = $3, expression = $4, configuration = $5::jsonb, position = $6, updated_at = $7 WHERE id = $1`,
      [before.id, f.target, f.title, f.expression, JSON.stringify(f.configuration), position, now],
    );
  }
  if (existing.size) await q.query('DELETE FROM app_functions WHERE id = ANY($1::uuid[])', [[...existing.values()].map((f) => f.id)]);
  if (!added.length && !retargeted.length) return;
  const { rows: stores } = await q.query<{ store_id: string }>(
    `SELECT store_id FROM installations WHERE app_id = $1 AND status = 'active' ORDER BY store_id`,
    [appId],
  );
  for (const { store_id } of stores) {
    let readmitted: string[] = [];
    if (retargeted.length) {
      // Moved to another target: re-admitted under that target's cap, as if activated now; those
      // active on the store, and those the cap left out (never activated). One the merchant
      // switched off (inactive, once activated) stays off: the developer's change is not theirs.
      const { rows } = await q.query<{ app_function_id: string }>(
        `UPDATE store_functions SET active = false, updated_at = $3
          WHERE store_id = $1 AND app_function_id = ANY($2::uuid[]) AND (active OR activated_at IS NULL)
          RETURNING app_function_id`,
        [store_id, retargeted, now],
      );
      readmitted = rows.map((r) => r.app_function_id);
    }
    if (added.length || readmitted.length) await activateAppFunctions(q, appId, store_id, now, [...added, ...readmitted]);
  }
}

/** A store's function as StoreFunctionRow, column by column: read as columns here, and as JSON by the checkout quote. */
const STORE_FUNCTION_FIELDS: [string, string][] = [
  ['id', 's.id'], ['store_id', 's.store_id'], ['app_id', 'f.app_id'], ['app_handle', 'a.handle'], ['handle', 'f.handle'],
  ['target', 'f.target'], ['title', 'f.title'], ['expression', 'f.expression'], ['active', 's.active'],
  ['configuration', 'coalesce(s.configuration, f.configuration)'], ['activated_at', 's.activated_at'],
];
const STORE_FUNCTION_COLUMNS = STORE_FUNCTION_FIELDS.map(([name, sql]) => `${sql} AS ${name}`).join(', ');
const STORE_FUNCTION_FROM = `store_functions s JOIN app_functions f ON f.id = s.app_function_id JOIN apps a ON a.id = f.app_id`;
/**
 * Activation order (C11.2): by `activated_at`; the functions one activation admits together (an
 * install, a reinstall, a manifest update) share that instant and run in their app's declared
 * order (`position`). Not by id: a reinstall re-activates the existing rows (activateAppFunctions'
 * ON CONFLICT), whose ids are in the order of their first activation, not the manifest's now
 * (a function declared before one installed earlier ran after it after a reinstall).
 */
const ACTIVATION_ORDER = 's.activated_at, f.app_id, f.position, s.id';

/**
 * The store's active functions as one JSON array in activation order, for a query that reads them
 * along with other things (the checkout quote, src/checkout/checkouts.repo.ts); `storeId` is the
 * SQL that names the store there.
 */
export const activeFunctionsJson = (storeId: string) =>
  `(SELECT coalesce(json_agg(json_build_object(${STORE_FUNCTION_FIELDS.map(([name, sql]) => `'${name}', ${sql}`).join(', ')}) ORDER BY ${ACTIVATION_ORDER}), '[]'::json)
     FROM ${STORE_FUNCTION_FROM} WHERE s.store_id = ${storeId} AND s.active)`;

/** The merchant's list: active functions in activation order, then the inactive ones. */
export async function listStoreFunctions(q: Queryable, storeId: string): Promise<StoreFunctionRow[]> {
  const { rows } = await q.query<StoreFunctionRow>(
    `SELECT ${STORE_FUNCTION_COLUMNS} FROM ${STORE_FUNCTION_FROM}
      WHERE s.store_id = $1 ORDER BY s.active DESC, ${ACTIVATION_ORDER}`,
    [storeId],
  );
  return rows;
}

export async function findStoreFunction(q: Queryable, storeId: string, functionId: string): Promise<StoreFunctionRow | null> {
  const { rows } = await q.query<StoreFunctionRow>(`SELECT ${STORE_FUNCTION_COLUMNS} FROM ${STORE_FUNCTION_FROM} WHERE s.store_id = $1 AND s.id = $2`, [storeId, functionId]);
  return rows[0] ?? null;
}

/** The active functions of a store, every target, in activation order: what a checkout runs (C11.2). */
export async function activeStoreFunctions(q: Queryable, storeId: string): Promise<StoreFunctionRow[]> {
  const { rows } = await q.query<StoreFunctionRow>(
    `SELECT ${STORE_FUNCTION_COLUMNS} FROM ${STORE_FUNCTION_FROM}
      WHERE s.store_id = $1 AND s.active ORDER BY ${ACTIVATION_ORDER}`,
    [storeId],
    { name: 'active_store_functions' },
  );
  return rows;
}

/** The merchant's change (C11.2 PATCH), under the store's lock; 'full' when the target has no room. */
export async function changeStoreFunction(
  q: Queryable,
  storeId: string,
  functionId: string,
  change: { active?: boolean; configuration?: Record<string, unknown> | null },
  now: Date,
): Promise<'changed' | 'full' | 'not_installed' | 'missing'> {
  await lockStoreFunctions(q, storeId);
  const current = await findStoreFunction(q, storeId, functionId);
  if (!current) return 'missing';
  if (change.active === true && !current.active) {
    const installed = await q.query(`SELECT 1 FROM installations WHERE app_id = $1 AND store_id = $2 AND status = 'active'`, [current.app_id, storeId]);
    if (!installed.rows.length) return 'not_installed';
    if (((await activeCounts(q, storeId)).get(current.target) ?? 0) >= MAX_ACTIVE_PER_TARGET) return 'full';
    await q.query('UPDATE store_functions SET active = true, activated_at = $3, updated_at = $3 WHERE store_id = $1 AND id = $2', [storeId, functionId, now]);
  } else if (change.active === false && current.active) {
    await q.query('UPDATE store_functions SET active = false, updated_at = $3 WHERE store_id = $1 AND id = $2', [storeId, functionId, now]);
  }
  if (change.configuration !== undefined) {
    // null: the manifest's configuration again.
    const configuration = change.configuration === null ? null : JSON.stringify(change.configuration);
    await q.query('UPDATE store_functions SET configuration = $3::jsonb, updated_at = $4 WHERE store_id = $1 AND id = $2', [storeId, functionId, configuration, now]);
  }
  return 'changed';
}

/** The configuration a store's function runs with now (the merchant's or the manifest's); null when it is gone. */
export async function storeFunctionConfiguration(q: Queryable, functionId: string): Promise<Record<string, unknown> | null> {
  const { rows } = await q.query<{ configuration: Record<string, unknown> }>(
    'SELECT coalesce(s.configuration, f.configuration) AS configuration FROM store_functions s JOIN app_functions f ON f.id = s.app_function_id WHERE s.id = $1',
    [functionId],
  );
  return rows[0]?.configuration ?? null;
}
