// The HTTP side of a `worker` process: liveness, readiness and metrics on the process's own PORT,
// nothing else (C1.3: a worker serves no API). Supervisors probe it like any api process.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Deps } from '../deps.js';
import { echoRequestId, requestIdOf, REQUEST_ID_HEADER } from '../http/request-id.js';
import { healthRoutes } from './health.routes.js';
import { instrumentHttp, metricsRoutes, UNMATCHED_ROUTE } from './metrics.js';

export async function buildHealthApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    genReqId: requestIdOf,
    // As on the api port: a request id and a metric even for a URL that cannot be routed.
    frameworkErrors: (_error, request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      deps.metrics.observeRequest(request.method, UNMATCHED_ROUTE, 400, reply.elapsedTime / 1000);
      return (reply as FastifyReply).code(400).send({ status: 'bad request' });
    },
  });
  echoRequestId(app);
  instrumentHttp(app, deps.metrics);
  await app.register(healthRoutes, { deps });
  await app.register(metricsRoutes, { metrics: deps.metrics });
  return app;
}
