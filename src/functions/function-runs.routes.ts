// `GET /apps/developer/{appId}/functions/{handle}/logs` and `.../runs` (app-api.md, C11.6),
// registered in the developer surface.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { envelopeListOf, envelopeOf, Id, PagingQuery, pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { RUN_STATUSES } from './function-runs.repo.js';
import { ALL_FUNCTIONS, functionLogs, functionRuns } from './function-runs.js';
import { RunLogSchema, RunSchema } from './function-view.js';

const tags = ['functions'];
const params = Type.Object({
  appId: Id('the app id'),
  handle: Type.String({ description: `a function's handle, or \`${ALL_FUNCTIONS}\` for every function of the app` }),
});
// Checked by the handler, after the app's ownership and the handle (403/404 before a 400).
const status = Type.Optional(Type.String({ description: `${RUN_STATUSES.join(' or ')} (another value -> 400)` }));

export async function functionRunRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  app.get('/apps/developer/:appId/functions/:handle/logs', {
    schema: {
      tags, params, summary: "The function's runs without input and output, newest first (C11.6)",
      querystring: pagedQuery({ status }),
      response: { 200: envelopeListOf(Type.Object({ logs: Type.Array(RunLogSchema) })) },
    },
  }, async (request) => {
    const page = parsePage(request.query, { limit: 50, max: 250 });
    const { logs, total } = await functionLogs(deps, request.user!, request.params.appId, request.params.handle, request.query.status, page);
    return envelopeList({ logs }, page, logs.length, total);
  });

  app.get('/apps/developer/:appId/functions/:handle/runs', {
    schema: {
      tags, params, summary: "The function's newest runs, whole: input and output (C11.6)",
      querystring: Type.Object({ limit: PagingQuery.properties.limit, status }),
      response: { 200: envelopeOf(Type.Object({ runs: Type.Array(RunSchema) })) },
    },
  }, async (request) => {
    const { limit } = parsePage(request.query, { limit: 50, max: 250 });
    return envelope(await functionRuns(deps, request.user!, request.params.appId, request.params.handle, request.query.status, limit));
  });
}
