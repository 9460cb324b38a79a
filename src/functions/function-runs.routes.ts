// `GET /apps/developer/{appId}/functions/{handle}/logs` and `.../runs` (app-api.md, C11.6),
// registered in the developer surface.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { envelopeListOf, envelopeOf, Id, PagingQuery, pagedQuery, withFilters } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { RUN_STATUSES } from './function-runs.repo.js';
import { ALL_FUNCTIONS, functionLogs, functionRuns } from './function-runs.js';
import { RunLogSchema, RunSchema } from './function-view.js';
import { replayRun, tryFunction } from './function-try.js';
import { DEVELOPER_RUNS_IN_FLIGHT, DEVELOPER_RUNS_PER_MINUTE } from './developer-runs.js';
import { ERROR_TYPES, MAX_CONFIGURATION_BYTES, MAX_EXPRESSION_CHARS, TARGETS } from './runtime/index.js';
import { nullable, StringEnum } from '../http/schemas.js';
import { noStore } from '../surfaces/no-store.js';

/** C11.7: what trying or replaying answers. */
const OutcomeSchema = Type.Object({
  status: StringEnum(['success', 'failure']),
  errorType: nullable(StringEnum(ERROR_TYPES)),
  errorMessage: nullable(Type.String()),
  output: Type.Unknown({ description: 'the output (C11.3); null when the run failed' }),
  durationMs: Type.Number(),
});
const expression = Type.String({ description: `CEL, at most ${MAX_EXPRESSION_CHARS} characters` });

const tags = ['functions'];
/** The bounds of developer runs (developer-runs.ts): trying and replaying share them. */
const runErrors = {
  429: `More than ${DEVELOPER_RUNS_IN_FLIGHT} runs of this app at once, or more than ${DEVELOPER_RUNS_PER_MINUTE} in a minute, trying and replaying together (Retry-After)`,
  503: "The developers' function pool is full (Retry-After)",
};
const params = Type.Object({
  appId: Id('the app id'),
  handle: Type.String({ description: `a function's handle, or \`${ALL_FUNCTIONS}\` for every function of the app` }),
});
// Checked by the handler, after the app's ownership and the handle (403/404 before a 400).
const status = Type.Optional(Type.String({ description: `${RUN_STATUSES.join(' or ')} (another value -> 400)` }));

export async function functionRunRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  noStore(instance); // each run's checkout token (C11.5, a bearer secret, C15.1), the buyer's email and address
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
      querystring: withFilters(Type.Object({ limit: PagingQuery.properties.limit, status }), ['status']),
      response: { 200: envelopeOf(Type.Object({ runs: Type.Array(RunSchema) })) },
    },
  }, async (request) => {
    const { limit } = parsePage(request.query, { limit: 50, max: 250 });
    return envelope(await functionRuns(deps, request.user!, request.params.appId, request.params.handle, request.query.status, limit));
  });

  app.post('/apps/developer/:appId/functions/run', {
    config: { errors: runErrors },
    schema: {
      tags, summary: 'Try an expression on an input of your own (C11.7): the outcome, nothing recorded',
      params: Type.Object({ appId: Id('the app id') }),
      body: Type.Object({
        target: Type.String({ description: `one of ${TARGETS.join(', ')}` }),
        expression,
        input: Type.Unknown({ description: 'the input the function is given (C11.3), e.g. { checkout, shop, deliveryOptions }' }),
        configuration: Type.Optional(Type.Unknown({ description: `a JSON object of at most ${MAX_CONFIGURATION_BYTES} bytes (default {})` })),
      }),
      response: { 200: envelopeOf(OutcomeSchema) },
    },
  }, async (request) => envelope(await tryFunction(deps, request.user!, request.params.appId, request.body)));

  app.post('/apps/developer/:appId/functions/:handle/runs/:runId/replay', {
    config: { errors: { 409: "The run's input was erased with its customer's data", ...runErrors } },
    schema: {
      tags, summary: "Run a recorded run's input again, with the function's current expression or the one given, and its current configuration (C11.7)",
      params: Type.Object({ appId: Id('the app id'), handle: Type.String({ description: "the function's handle" }), runId: Id('the run') }),
      body: nullable(Type.Object({ expression: Type.Optional(expression) })),
      response: { 200: envelopeOf(OutcomeSchema) },
    },
  }, async (request) => {
    const { appId, handle, runId } = request.params;
    return envelope(await replayRun(deps, request.user!, appId, handle, runId, request.body ?? {}));
  });
}
