// Responses that carry a credential must not be kept by any cache between the caller and the
// service (a proxy, a browser's back button). RFC 6749 section 5.1 requires `Cache-Control: no-store`
// and `Pragma: no-cache` on the token endpoint's answers; the same holds for every other answer
// that hands out a secret: an authorization code in a handoff URL, a session token, a platform JWT
// (signup, login), an app's client secret (create, get, update, rotate), a webhook's signing secret
// (API subscriptions, store webhooks), a checkout's token with the buyer's address (the storefront's
// checkout routes, and the developer's function logs and runs, which show each run's checkout).
// test/no-store-sweep.test.ts finds every such route by its answer's fields and checks it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

function setNoStore(_request: FastifyRequest, reply: FastifyReply, done: () => void) {
  reply.header('Cache-Control', 'no-store');
  reply.header('Pragma', 'no-cache');
  done();
}

/**
 * Every answer of the routes registered in `instance` (a route plugin), errors included, is marked
 * not to be stored. Set on request, so a refusal (401, 400) carries it too.
 */
export function noStore(instance: FastifyInstance): void {
  instance.addHook('onRequest', setNoStore);
}
