// The HTTP side of a `worker` process: liveness, readiness and metrics on the process's own PORT,
// nothing else (C1.3: a worker serves no API). Supervisors probe it like any api process.
//
// Its errors are the api port's for the same paths (the operator surfaces': the envelope), from the
// same code: an unknown route or method, a body that cannot be read, a URL the router refuses, a
// request Node's parser refuses, an unknown Expect, a missing Host, a request during shutdown.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { echoRequestId, requestIdOf, REQUEST_ID_HEADER } from '../http/request-id.js';
import { installErrorHandler, sendError } from '../http/error-handler.js';
import { AppError } from '../http/errors.js';
import { MAX_BODY_BYTES, useBoundedJson } from '../http/input-guard.js';
import { clientErrorHandler, expectationFailedHandler } from '../http/client-errors.js';
import { EDGE_SERVER_OPTIONS, refuseAtTheEdge } from '../http/edge.js';
import { healthRoutes } from './health.routes.js';
import { instrumentHttp, metricsRoutes, UNMATCHED_ROUTE } from './metrics.js';

/** Every path of this port is an operator's: every error is an envelope. */
const envelope = () => 'envelope' as const;

export async function buildHealthApp(deps: Deps): Promise<FastifyInstance> {
  const observeUnrouted = (method: string, status: number) => deps.metrics.observeRequest(method, UNMATCHED_ROUTE, status, 0);
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    genReqId: requestIdOf,
    bodyLimit: MAX_BODY_BYTES,
    ...EDGE_SERVER_OPTIONS,
    // As on the api port: a request id and a metric even for a URL that cannot be routed.
    frameworkErrors: (error, request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      sendError(request, reply, new AppError('bad_request', error.code === 'FST_ERR_BAD_URL' ? 'Malformed URL' : 'Bad request'));
      deps.metrics.observeRequest(request.method, UNMATCHED_ROUTE, 400, reply.elapsedTime / 1000);
    },
    clientErrorHandler: clientErrorHandler(envelope, observeUnrouted),
  });
  app.server.on('checkExpectation', expectationFailedHandler(envelope, observeUnrouted));
  installErrorHandler(app);
  echoRequestId(app);
  refuseAtTheEdge(app, envelope);
  instrumentHttp(app, deps.metrics);
  useBoundedJson(app);
  await app.register(healthRoutes, { deps });
  await app.register(metricsRoutes, { metrics: deps.metrics });
  return app;
}
