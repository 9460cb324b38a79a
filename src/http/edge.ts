// Two answers Node and Fastify would otherwise give in bodies of their own, outside any documented
// shape (C5.1 wants every error of an endpoint in that endpoint's shape, C5.5 the version header on
// every /api/v1/ answer):
// - an HTTP/1.1 request without a Host header: Node's server refuses it before Fastify sees it, with
//   an empty 400 (`requireHostHeader`);
// - a request that arrives while the process shuts down (on a connection kept alive from before):
//   Fastify answers its own 503 body (`return503OnClosing`).
// Both are let through to Fastify (EDGE_SERVER_OPTIONS) and refused here, in the first hooks, in the
// shape of the endpoint the URL names, before any surface's gate or handler runs: like the parser's
// refusals (client-errors.ts), they are not authenticated, carry no rate-limit headers and close the
// connection. Everything else passes untouched.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { API_VERSION } from '../api-version.js';
import { badRequest, unavailable, type AppError } from './errors.js';
import type { ErrorShape } from './shapes.js';

/** The Fastify options that let both requests reach refuseAtTheEdge; for every listening instance. */
export const EDGE_SERVER_OPTIONS = {
  http: { requireHostHeader: false },
  return503OnClosing: false,
} as const;

/** HTTP/1.1 requires Host (RFC 9112, 3.2); HTTP/1.0 does not, and Node lets it in without one. */
const missingHost = (request: FastifyRequest) =>
  request.headers.host === undefined && request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor === 1;

/**
 * The request target as a path: one in absolute form (`GET http://host/api/v1/x.json`, RFC 9112
 * 3.2.2) names the endpoint its path does, as the router reads it (find-my-way).
 */
export const pathOfTarget = (url: string) => (url.startsWith('/') ? url : url.replace(/^https?:\/\/[^/?#]*/i, '') || '/');

/**
 * Registers the refusals on the root instance, right after the request id is set (so before every
 * surface's hooks). `shapeOfUrl`: the error shape of the endpoint a URL names, for URLs no route matches.
 */
export function refuseAtTheEdge(app: FastifyInstance, shapeOfUrl: (method: string, url: string) => ErrorShape): void {
  // Set as `close()` begins (Fastify stops routing normally at the same moment).
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (err?: AppError) => void) => {
    // Callback style and two property reads: this runs on every request.
    if (!closing && !missingHost(request)) return done();
    // The Retry-After the error handler gives every 503 (1 s) sends the client to another process.
    const refusal = closing ? unavailable('The service is shutting down; send the request again') : badRequest('The Host header is required');
    const path = pathOfTarget(request.url);
    request.fallbackShape = shapeOfUrl(request.method, path);
    if (path.startsWith('/api/v1/')) reply.header('X-SVC-Api-Version', API_VERSION);
    reply.header('Connection', 'close');
    done(refusal);
  });
}
