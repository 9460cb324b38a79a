// App API fulfillments (app-api.md Endpoints; scope write_orders): envelope `data.fulfillment`, errors
// as envelope errors (C5.1). The order must be the token store's (404 otherwise).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { createFulfillment, updateFulfillment } from './fulfillments.service.js';
import { FulfillmentCreateBody, FulfillmentUpdateBody } from './fulfillments.input.js';
import { FulfillmentSchema } from './fulfillments.view.js';

const tags = ['fulfillments'];
const fulfillmentEnvelope = envelopeOf(Type.Object({ fulfillment: FulfillmentSchema }));

export async function fulfillmentApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  const write = { scope: 'write_orders', shape: 'envelope' } as const;

  api.post('/orders/:orderId/fulfillments.json', {
    config: { ...write, bodyKey: 'fulfillment' },
    schema: {
      tags,
      params: Type.Object({ orderId: Type.String({ description: 'order id (UUID)' }) }),
      body: FulfillmentCreateBody,
      response: { 201: fulfillmentEnvelope },
      summary: 'Fulfil all or part of an order: 201 envelope data.fulfillment; emits fulfillments/create (and orders/updated, orders/fulfilled when the order moves)',
    },
  }, async (request, reply) => {
    const { orderId } = request.params;
    const fulfillment = await createFulfillment(deps, apiCaller(request).storeId, orderId, request.body ?? {});
    return reply.code(201).send(envelope({ fulfillment }, 201));
  });

  api.put('/fulfillments/:fulfillment_id.json', {
    config: { ...write, bodyKey: 'fulfillment' },
    schema: {
      tags, params: Type.Object({ fulfillment_id: Type.String({ description: 'fulfillment id (UUID); named as app-api.md names it' }) }), body: FulfillmentUpdateBody,
      response: { 200: fulfillmentEnvelope },
      summary: 'Progress a shipment; emits fulfillments/update (and orders/updated, orders/fulfilled when the order moves)',
    },
  }, async (request) => {
    const { fulfillment_id } = request.params;
    return envelope({ fulfillment: await updateFulfillment(deps, apiCaller(request).storeId, fulfillment_id, request.body) });
  });
}
