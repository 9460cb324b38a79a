// Handlers take their types from their route's schemas (issue 11 section 1): a route file turns
// the instance it is given into a typed one, and `request.params`, `request.query`,
// `request.body` and the reply are then the static types of the route's TypeBox schemas, so no
// handler casts `request.*`.
//
//   export async function customerApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
//     const api = typed(instance);
//     api.get('/customers/:id.json', { schema: { params: ..., response: { 200: ... } } }, async (request) => ...);
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

export function typed(instance: FastifyInstance) {
  return instance.withTypeProvider<TypeBoxTypeProvider>();
}

export type TypedInstance = ReturnType<typeof typed>;
