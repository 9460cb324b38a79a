// `GET /functions` and `PATCH /functions/{functionId}` (C11.2), registered in the merchant admin
// surface: the store's staff, or the operator naming the store with `storeId`.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf, Id } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { StoreFunctionSchema } from './function-view.js';
import { changeFunction, storeFunctions } from './store-functions.js';
import { MAX_CONFIGURATION_BYTES } from './runtime/index.js';

const tags = ['functions'];
const storeIdQuery = Type.Object({ storeId: Type.Optional(Type.String({ description: 'the store, for the platform operator only' })) });

export async function functionAdminRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);

  admin.get('/functions', {
    schema: {
      tags, summary: "The store's functions (C11.2): active ones in the order they run, then the inactive",
      querystring: storeIdQuery,
      response: { 200: envelopeOf(Type.Object({ functions: Type.Array(StoreFunctionSchema) })) },
    },
  }, async (request) => envelope(await storeFunctions(deps, adminStoreId(request))));

  admin.patch('/functions/:functionId', {
    config: { errors: { 409: 'A 26th active function of one target, or activating a function whose app is not installed' } },
    schema: {
      tags, summary: 'Switch a function on or off, or set its configuration (C11.2); activating moves it to the end of the order',
      params: Type.Object({ functionId: Id('functionId (UUID); another store’s is not found') }),
      querystring: storeIdQuery,
      body: Type.Object({
        active: Type.Optional(Type.Boolean()),
        configuration: Type.Optional(Type.Unknown({ description: `a JSON object of at most ${MAX_CONFIGURATION_BYTES} bytes, given to the function as \`configuration\`; null: the manifest's again` })),
        storeId: Type.Optional(Type.String({ description: 'the store, for the platform operator only' })),
      }),
      response: { 200: envelopeOf(Type.Object({ function: StoreFunctionSchema })) },
    },
  }, async (request) => envelope(await changeFunction(deps, adminStoreId(request), request.params.functionId, request.body)));
}
