// Request ids: unique across every process of a deployment (Fastify's default is a per-process
// counter, so two api processes both log `req-1`), carried over from a caller or a proxy in front of
// us when the id they send is well formed, and returned in `X-Request-Id` on every response, errors
// included, so a caller can quote it and an operator can find its log lines.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** Bounded and plain: an incoming id goes into logs and a response header as it is. */
const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's `genReqId`: the caller's id when well formed, else a random UUID (cheap: pooled entropy). */
export function requestIdOf(raw: IncomingMessage): string {
  const incoming = raw.headers['x-request-id'];
  return typeof incoming === 'string' && INCOMING_ID.test(incoming) ? incoming : randomUUID();
}

/** On the root instance, before every surface's own hooks: set before any of them can fail. */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
