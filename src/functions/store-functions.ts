// The merchant's side of functions (C11.2): the store's functions, switching one on or off and
// setting its configuration. Installing and uninstalling an app activate and deactivate its
// functions (src/oauth/oauth.service.ts, functions.repo.ts).
import type { Deps } from '../deps.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { isUuid } from '../ids.js';
import { changeStoreFunction, findStoreFunction, listStoreFunctions, MAX_ACTIVE_PER_TARGET } from './functions.repo.js';
import { storeFunctionView } from './function-view.js';
import { configurationProblem } from './runtime/index.js';

export async function storeFunctions(deps: Deps, storeId: string) {
  return { functions: (await listStoreFunctions(deps.db, storeId)).map(storeFunctionView) };
}

export async function changeFunction(deps: Deps, storeId: string, functionId: string, body: { active?: boolean; configuration?: unknown }) {
  if (!isUuid(functionId)) throw notFound('Function not found');
  // null gives the function the manifest's configuration again.
  const problem = configurationProblem(body.configuration);
  if (problem) throw badRequest(problem, { configuration: [problem.replace(/^configuration /, '')] });
  const change = { active: body.active, configuration: body.configuration as Record<string, unknown> | null | undefined };
  const outcome = await deps.db.transaction((tx) => changeStoreFunction(tx, storeId, functionId, change, deps.clock.now()));
  if (outcome === 'missing') throw notFound('Function not found');
  if (outcome === 'full') throw conflict(`This store already has ${MAX_ACTIVE_PER_TARGET} active functions of this target`);
  if (outcome === 'not_installed') throw conflict("The function's app is not installed on this store");
  return { function: storeFunctionView((await findStoreFunction(deps.db, storeId, functionId))!) };
}
