// Merchant admin order routes (C7.1; app-api.md merchant update): envelopes whose `data` is the
// merchant order record. Another store's order -> 403; an unknown one -> 404.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { envelope } from '../http/shapes.js';
import { field } from '../content/content.schemas.js';
import { adminActor, updateOrder } from './orders.service.js';
import { createOrder } from './order-create.js';
import { cancelOrder, refundOrder } from './refunds.js';

const tags = ['merchant admin'];
const params = Type.Object({ orderId: Type.String({ description: 'order id (UUID)' }) });

/** Documentation only: the rules (order-input.ts) check each field. */
const createBody = Type.Object({
  customer: field('{ email, first_name, last_name, phone }: a new email creates the customer (customers/create)'),
  line_items: field('[{ product_id (UUID or numeric id), variant_id? (UUID or numeric id; required for a product with variants), quantity, properties? }]; a custom item has title and price instead of product_id'),
  shipping_address: field('{ first_name, last_name, company, address1, address2, city, province, province_code, country, country_code, zip, phone }; required'),
  billing_address: field('same fields; default: the shipping address'),
  shipping_line: field('{ title, code, source (app handle or null), price (decimal string) }'),
  discount_code: field('checked as at checkout (status, start/end, minimum, total uses, uses per customer, products)'),
  tax_rate: field('rate from 0 to 1 (0.08 = 8 %) applied to the line items after discounts'),
  paymentMethod: field('card, upi or wallet (paid at once); cod, cash, bank_transfer or offline (pending); required'),
  note: field('string, kept as sent'),
  tags: field('array of strings, kept as sent'),
  currency: field('ISO 4217; default: the store currency'),
  storeId: field('the store, for the platform operator only'),
});

const updateBody = Type.Object({
  status: field('pending, confirmed, shipped, delivered, canceled, returned or exchange; a new status on a delivered or canceled order -> 400'),
  courierName: field('string'),
  trackingNumber: field('string'),
  digitaldata: field('string'),
  deliveryDate: field('ISO 8601'),
  restock: field('boolean: with status returned or canceled, stock goes back once per line item'),
  staffId: field('string, kept for audit'),
  notes: field('string'),
  products: field('replacement line items [{ productId, varientId?, quantity, price? }]; totals are recomputed'),
  clientName: field('string (shipping address name)'),
  email: field('string'),
  mobileNumber: field('string'),
  address: field('string (shipping address1)'),
  city: field('string'),
  state: field('string (shipping province)'),
  country: field('string'),
  pinCode: field('string (shipping zip)'),
  paymentMethod: field('cod, cash, bank_transfer or offline moves a pending order to paid (orders/paid)'),
});

export async function orderAdminRoutes(admin: FastifyInstance, { deps }: { deps: Deps }) {
  admin.post('/orders', {
    schema: { tags, summary: 'Take an order (C7.1): 201; emits orders/create (and orders/paid when paid at once)', body: createBody },
  }, async (request, reply) => reply.code(201).send(envelope(await createOrder(deps, adminStoreId(request), request.body), 201)));

  const update = async (request: any) => envelope(await updateOrder(deps, request.params.orderId, request.body, adminActor(request.user)));
  admin.put('/orders/update/:orderId', {
    schema: { tags, params, body: updateBody, summary: 'Update an order (app-api.md Order status); emits orders/updated (+ orders/paid, orders/cancelled)' },
  }, update);
  admin.patch('/orders/update-signle-order/:orderId', {
    schema: { tags, params, body: updateBody, summary: 'Update one order (same body and rules as PUT /orders/update/{orderId})' },
  }, update);

  admin.post('/orders/:orderId/refund', {
    schema: {
      tags, params,
      summary: 'Full refund `{ reason?, restock?, pos? }`: refunds/create, orders/updated, orders/cancelled; with pos: true refunds/create, orders/updated',
    },
  }, async (request: any) => envelope(await refundOrder(deps, request.params.orderId, request.body, adminActor(request.user))));

  admin.post('/orders/:orderId/cancel', {
    schema: { tags, params, summary: 'Cancel `{ reason?, restock? }`: orders/updated, orders/cancelled' },
  }, async (request: any) => envelope(await cancelOrder(deps, request.params.orderId, request.body, adminActor(request.user))));
}
