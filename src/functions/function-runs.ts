// The developer's view of function runs (C11.6): logs (records without input and output, paged)
// and runs (whole records, the newest `limit`). The caller must own the app (403 for another
// developer's, 404 for an unknown one); the handle must name one of its functions, or be `all`.
import type { Deps } from '../deps.js';
import type { PlatformUser } from '../accounts/jwt.js';
import { ownedApp } from '../apps/apps.service.js';
import { badRequest, notFound } from '../http/errors.js';
import type { Page } from '../http/paging.js';
import { appFunctions } from './functions.repo.js';
import { isUuid } from '../ids.js';
import { countRuns, findRun, listRuns, RUN_STATUSES, type RunFilter, type RunStatus } from './function-runs.repo.js';
import { runLogView, runView } from './function-view.js';
import { ALL_FUNCTIONS } from './manifest-functions.js';

/** `all` covers every function of the app (C11.6); no function may take that handle (manifest-functions.ts). */
export { ALL_FUNCTIONS };

async function runFilter(deps: Deps, developer: PlatformUser, appId: string, handle: string, status: string | undefined): Promise<RunFilter> {
  const app = await ownedApp(deps, developer, appId);
  if (handle !== ALL_FUNCTIONS && !(await appFunctions(deps.db, app.id)).some((f) => f.handle === handle)) throw notFound('Function not found');
  if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus)) throw badRequest(`status must be one of ${RUN_STATUSES.join(', ')}`);
  return { appId: app.id, handle: handle === ALL_FUNCTIONS ? null : handle, status: (status as RunStatus | undefined) ?? null };
}

const opener = (deps: Deps) => (sealed: string) => deps.secrets.open(sealed);

export async function functionLogs(deps: Deps, developer: PlatformUser, appId: string, handle: string, status: string | undefined, page: Page) {
  const filter = await runFilter(deps, developer, appId, handle, status);
  const [rows, total] = await Promise.all([listRuns(deps.db, filter, page, false), countRuns(deps.db, filter)]);
  return { logs: rows.map((r) => runLogView(r, opener(deps))), total };
}

export async function functionRuns(deps: Deps, developer: PlatformUser, appId: string, handle: string, status: string | undefined, limit: number) {
  const filter = await runFilter(deps, developer, appId, handle, status);
  const rows = await listRuns(deps.db, filter, { limit, offset: 0 }, true);
  return { runs: rows.map((r) => runView(r, opener(deps))) };
}

/** The app's declared functions (the dashboard's filter and run pages), after the same ownership check. */
export async function declaredFunctions(deps: Deps, developer: PlatformUser, appId: string) {
  const app = await ownedApp(deps, developer, appId);
  return (await appFunctions(deps.db, app.id)).map((f) => ({ handle: f.handle, target: f.target, title: f.title, expression: f.expression }));
}

/** One whole run (the dashboard's run page), found as replay finds it: the app's, under the function's handle. */
export async function functionRun(deps: Deps, developer: PlatformUser, appId: string, handle: string, runId: string) {
  const app = await ownedApp(deps, developer, appId);
  const declared = (await appFunctions(deps.db, app.id)).find((f) => f.handle === handle);
  const run = isUuid(runId) ? await findRun(deps.db, app.id, handle, runId) : null;
  if (!run) throw notFound('Run not found');
  return { run: runView(run, opener(deps)), expression: declared?.expression ?? null };
}
