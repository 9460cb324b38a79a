// Trying functions (C11.7): a developer runs an expression on an input of their own, or replays a
// recorded run (its input, with the function's current expression or one given, and its current
// configuration). Both run with the same limits as a checkout's runs, but in the developers' own
// pool, bounded per app (developer-runs.ts: 429 past an app's places or minute, 503 when the pool
// is full), never in the checkouts' pool; neither records a run nor touches a checkout.
import type { Deps } from '../deps.js';
import type { PlatformUser } from '../accounts/jwt.js';
import { ownedApp } from '../apps/apps.service.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { isUuid } from '../ids.js';
import { appFunctions, storeFunctionConfiguration } from './functions.repo.js';
import { findRun } from './function-runs.repo.js';
import { runView } from './function-view.js';
import { runForDeveloper } from './developer-runs.js';
import { configurationProblem, isTarget, TARGETS, type RunResult } from './runtime/index.js';

export interface TryRun {
  target: string;
  expression: string;
  input: unknown;
  configuration?: unknown;
}

/** What C11.7 answers: the run's outcome, no record. */
const outcome = (r: RunResult) => ({ status: r.status, errorType: r.errorType, errorMessage: r.errorMessage, output: r.output, durationMs: r.durationMs });

/**
 * An expression that cannot run is the caller's mistake (400), as on app create (C11.1). Compiled
 * in the developers' worker, never in the event loop, and only once the run holds its places
 * (runForDeveloper): compiling is work, bounded per app as runs are. When no worker was free to
 * check it (another run of the pool was a runaway, and its replacement still loading), the try is
 * answered as a run that found no worker is: 200 with that outcome, "not run" (runForDeveloper).
 */
async function assertCompiles(deps: Deps, expression: string) {
  const problem = await deps.developerFunctions.check(expression);
  if (problem) throw badRequest(problem, { expression: [problem.replace(/^expression /, '')] });
}

export async function tryFunction(deps: Deps, developer: PlatformUser, appId: string, body: TryRun) {
  const app = await ownedApp(deps, developer, appId);
  if (!isTarget(body.target)) throw badRequest(`target must be one of ${TARGETS.join(', ')}`);
  const request = { target: body.target, expression: body.expression, input: body.input, configuration: body.configuration ?? {} };
  return outcome(await runForDeveloper(deps, app.id, request, async () => {
    await assertCompiles(deps, body.expression);
    const problem = configurationProblem(body.configuration);
    if (problem) throw badRequest(problem);
  }));
}

export async function replayRun(deps: Deps, developer: PlatformUser, appId: string, handle: string, runId: string, body: { expression?: string }) {
  const app = await ownedApp(deps, developer, appId);
  const declared = (await appFunctions(deps.db, app.id)).find((f) => f.handle === handle);
  if (!declared) throw notFound('Function not found');
  const run = isUuid(runId) ? await findRun(deps.db, app.id, handle, runId) : null;
  if (!run) throw notFound('Run not found');
  const { input } = runView(run, (sealed) => deps.secrets.open(sealed));
  if (input === null) throw conflict("This run's input was erased with its customer's data (C9)");
  const expression = body.expression ?? declared.expression;
  // The function's configuration on the run's store now; the manifest's if the store has none.
  const configuration = (await storeFunctionConfiguration(deps.db, run.function_id)) ?? declared.configuration;
  const check = body.expression !== undefined ? () => assertCompiles(deps, expression) : undefined;
  return outcome(await runForDeveloper(deps, app.id, { target: declared.target, expression, input, configuration }, check));
}
