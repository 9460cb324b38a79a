// Merchant admin order routes (C7.1; app-api.md merchant update): envelopes whose `data` is the
// merchant order record. Another store's order -> 403; an unknown one -> 404.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { MerchantOrderSchema } from './order-schema.js';
import { NewOrderBody, OrderUpdateBody, RefundOrCancelBody } from './order-input.schemas.js';
import { optionalBody } from './schema-parts.js';
import { adminActor, updateOrder } from './orders.service.js';
import { createOrder } from './order-create.js';
import { cancelOrder, refundOrder } from './refunds.js';

const tags = ['merchant admin'];
const params = Type.Object({ orderId: Type.String({ description: 'order id (UUID)' }) });

const orderEnvelope = envelopeOf(MerchantOrderSchema);
const refundBody = optionalBody(RefundOrCancelBody, '`{ reason?, restock?, pos? }`, or no body');
const cancelBody = optionalBody(Type.Object({ reason: RefundOrCancelBody.properties.reason, restock: RefundOrCancelBody.properties.restock }), '`{ reason?, restock? }`, or no body');

export async function orderAdminRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  admin.post('/orders', {
    schema: {
      tags, summary: 'Take an order (C7.1): 201; emits orders/create (and orders/paid when paid at once)',
      body: NewOrderBody, response: { 201: orderEnvelope },
    },
  }, async (request, reply) => reply.code(201).send(envelope(await createOrder(deps, adminStoreId(request), request.body), 201)));

  const update = { params, body: OrderUpdateBody, response: { 200: orderEnvelope } };
  admin.put('/orders/update/:orderId', {
    schema: { tags, ...update, summary: 'Update an order (app-api.md Order status); emits orders/updated (+ orders/paid, orders/cancelled)' },
  }, async (request) => envelope(await updateOrder(deps, request.params.orderId, request.body, adminActor(request.user))));
  admin.patch('/orders/update-signle-order/:orderId', {
    schema: { tags, ...update, summary: 'Update one order (same body and rules as PUT /orders/update/{orderId})' },
  }, async (request) => envelope(await updateOrder(deps, request.params.orderId, request.body, adminActor(request.user))));

  admin.post('/orders/:orderId/refund', {
    schema: {
      tags, params, body: refundBody, response: { 200: orderEnvelope },
      summary: 'Full refund `{ reason?, restock?, pos? }`: refunds/create, orders/updated, orders/cancelled; with pos: true refunds/create alone',
    },
  }, async (request) => envelope(await refundOrder(deps, request.params.orderId, request.body, adminActor(request.user))));

  admin.post('/orders/:orderId/cancel', {
    schema: { tags, params, body: cancelBody, response: { 200: orderEnvelope }, summary: 'Cancel `{ reason?, restock? }`: orders/updated, orders/cancelled' },
  }, async (request) => envelope(await cancelOrder(deps, request.params.orderId, request.body, adminActor(request.user))));
}
