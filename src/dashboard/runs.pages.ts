// Developer pages for function runs (C11.5 to C11.7): the logs filtered by function and status and
// paged, one run with its input, output, error and duration, and Replay with an edited expression.
// Each calls the service the developer API's route calls (src/functions/function-runs.ts,
// function-try.ts), so ownership, the handle and the expression are checked the same way.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { parsePage } from '../http/paging.js';
import { pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { DEVELOPER_ROLES } from '../http/user-auth.js';
import { ALL_FUNCTIONS, declaredFunctions, functionLogs, functionRun } from '../functions/function-runs.js';
import { RUN_STATUSES } from '../functions/function-runs.repo.js';
import { replayRun } from '../functions/function-try.js';
import { ownedApp } from '../apps/apps.service.js';
import { formRefusal } from './refusals.js';
import { page } from './render.js';

const developer = { roles: DEVELOPER_ROLES };
const AppParams = Type.Object({ appId: Type.String() });
const RunParams = Type.Object({ appId: Type.String(), handle: Type.String(), runId: Type.String() });
const ListQuery = pagedQuery({ function: Type.Optional(Type.String()), status: Type.Optional(Type.String()) });

export async function runPages(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  app.get('/apps/:appId/runs', { config: developer, schema: { params: AppParams, querystring: ListQuery } }, async (request, reply) => {
    const user = request.dashboardUser!;
    const row = await ownedApp(deps, user, request.params.appId);
    const handle = request.query.function || ALL_FUNCTIONS;
    const status = request.query.status || undefined;
    const paging = parsePage(request.query, { limit: 25 });
    const [functions, { logs, total }] = await Promise.all([
      declaredFunctions(deps, user, row.id),
      functionLogs(deps, user, row.id, handle, status, paging),
    ]);
    return page(deps, request, reply, 'runs', {
      title: `Function runs · ${row.name}`,
      app: { appId: row.id, name: row.name },
      functions, logs,
      filters: { function: handle === ALL_FUNCTIONS ? '' : handle, status: status ?? '' },
      statuses: RUN_STATUSES,
      paged: { page: paging.page, limit: paging.limit, total },
    });
  });

  const runPage = async (request: Parameters<typeof page>[1], reply: Parameters<typeof page>[2], params: { appId: string; handle: string; runId: string }, replay: { expression: string; outcome: unknown; error: string | null } | null, status = 200) => {
    const user = request.dashboardUser!;
    const row = await ownedApp(deps, user, params.appId);
    const { run, expression } = await functionRun(deps, user, row.id, params.handle, params.runId);
    return page(deps, request, reply, 'run', {
      title: `Run of ${run.functionHandle}`,
      app: { appId: row.id, name: row.name },
      run,
      expression: replay?.expression ?? expression ?? '',
      replay,
    }, status);
  };

  app.get('/apps/:appId/runs/:handle/:runId', { config: developer, schema: { params: RunParams } }, async (request, reply) =>
    runPage(request, reply, request.params, null));

  // Replay answers on the run's page (nothing is recorded, C11.7): the outcome beside the run.
  app.post('/apps/:appId/runs/:handle/:runId/replay', {
    config: developer,
    schema: { params: RunParams, body: Type.Object({ _csrf: Type.Optional(Type.String()), expression: Type.Optional(Type.String()) }) },
  }, async (request, reply) => {
    const { appId, handle, runId } = request.params;
    const expression = request.body.expression ?? '';
    try {
      const outcome = await replayRun(deps, request.dashboardUser!, appId, handle, runId, expression.trim() ? { expression } : {});
      return runPage(request, reply, request.params, { expression, outcome, error: null });
    } catch (err) {
      const refusal = formRefusal(err, reply, ['bad_request', 'conflict']);
      return runPage(request, reply, request.params, { expression, outcome: null, error: refusal.message }, refusal.status);
    }
  });
}
