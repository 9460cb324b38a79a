// App API fulfillments (app-api.md Endpoints; scope write_orders): envelope `data.fulfillment`, errors
// as envelope errors (C5.1). The order must be the token store's (404 otherwise).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { envelope } from '../http/shapes.js';
import { field } from '../content/content.schemas.js';
import { createFulfillment, updateFulfillment } from './fulfillments.service.js';

const tags = ['fulfillments'];

const updateBody = Type.Object({
  status: field('pending, open, success, shipped, delivered, cancelled, error or failure; delivered moves the order to delivered'),
  tracking_number: field('string'),
  tracking_url: field('well-formed http(s) URL'),
  tracking_company: field('string, stored verbatim'),
});

export async function fulfillmentApiRoutes(api: FastifyInstance, { deps }: { deps: Deps }) {
  const write = { scope: 'write_orders', shape: 'envelope' } as const;

  api.post('/orders/:orderId/fulfillments.json', {
    config: write,
    schema: {
      tags,
      params: Type.Object({ orderId: Type.String() }),
      summary: 'Fulfil all or part of an order: 201 envelope data.fulfillment; emits fulfillments/create (and orders/updated, orders/fulfilled when the order moves). ' +
        'Body: status (pending default, open, success, cancelled, error, failure), tracking_number, tracking_url, tracking_company, service_id, ' +
        'notify_customer (default true), line_items [{ id, quantity }] (empty or omitted: the whole order)',
    },
  }, async (request, reply) => {
    const { orderId } = request.params as { orderId: string };
    const fulfillment = await createFulfillment(deps, apiCaller(request).storeId, orderId, request.body ?? {});
    return reply.code(201).send(envelope({ fulfillment }, 201));
  });

  api.put('/fulfillments/:id.json', {
    config: write,
    schema: {
      tags, params: Type.Object({ id: Type.String() }), body: updateBody,
      summary: 'Progress a shipment; emits fulfillments/update (and orders/updated, orders/fulfilled when the order moves)',
    },
  }, async (request) => {
    const { id } = request.params as { id: string };
    return envelope({ fulfillment: await updateFulfillment(deps, apiCaller(request).storeId, id, request.body) });
  });
}
