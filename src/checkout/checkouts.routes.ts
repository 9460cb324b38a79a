// Storefront checkouts (C15.1): no credential but the checkout's token, which is in the path. The
// storefront surface (src/app.ts) registers them; envelopes throughout, `data.checkout`.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { OrderSchema } from '../orders/order-schema.js';
import { CheckoutChangeSchema, CheckoutCreateSchema } from './checkout-input.js';
import { CheckoutSchema } from './checkout-view.js';
import { ShippingRateSchema } from './rate.js';
import { changeCheckout, checkoutShippingRates, completeCheckout, createCheckout, getCheckout } from './checkout.service.js';
import { noStore } from '../surfaces/no-store.js';

const tags = ['checkout'];
const store = Type.Object({ storeURL: Type.String({ description: 'the store slug' }) });
const checkout = Type.Object({ ...store.properties, token: Type.String({ description: 'the checkout token (from the create response)' }) });
const checkoutBody = envelopeOf(Type.Object({ checkout: CheckoutSchema }));

export async function checkoutRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  noStore(instance); // the checkout token (a bearer secret, C15.1) and the buyer's email and address
  const app = typed(instance);

  app.post('/storefront/:storeURL/checkouts', {
    config: { errors: { 400: 'A product that is not active, a quantity that is not a whole number from 1, an address without an ISO 3166-1 alpha-2 country_code (C15.1), or lines that come to more than an order can hold (C5.2)' } },
    schema: {
      tags, summary: 'Start a checkout (C15.1): 201 with its token, the only key to it',
      params: store, body: CheckoutCreateSchema, response: { 201: checkoutBody },
    },
  }, async (request, reply) => reply.code(201).send(envelope({ checkout: await createCheckout(deps, request.params.storeURL, request.body) }, 201)));

  app.get('/storefront/:storeURL/checkouts/:token', {
    schema: { tags, summary: 'The checkout, priced now (an expired one can still be read)', params: checkout, response: { 200: checkoutBody } },
  }, async (request) => envelope({ checkout: await getCheckout(deps, request.params.storeURL, request.params.token) }));

  app.patch('/storefront/:storeURL/checkouts/:token', {
    config: { errors: { 400: 'As for create: an inactive product, a bad quantity or address, or new lines that come to more than an order can hold (C5.2)', 409: 'The checkout is completed', 410: 'The checkout has expired (24 hours after creation)', 422: 'The shipping rate or payment method chosen is not offered' } },
    schema: {
      tags, summary: 'Change the checkout: any create field (line_items replaces all), shipping_rate, payment_method',
      params: checkout, body: CheckoutChangeSchema, response: { 200: checkoutBody },
    },
  }, async (request) => envelope({ checkout: await changeCheckout(deps, request.params.storeURL, request.params.token, request.body) }));

  app.get('/storefront/:storeURL/checkouts/:token/shipping_rates', {
    // It asks the shipping apps (outbound calls) and records their answers and the function runs: a
    // HEAD must not, so none is derived from this GET (test/http-edge-requests.test.ts).
    exposeHeadRoute: false,
    config: { errors: { 409: 'The checkout is completed', 410: 'The checkout has expired' } },
    schema: {
      tags, summary: "The rates on offer: the merchant's zones (C15.2) and the shipping apps' live rates (C15.3)",
      params: checkout, response: { 200: envelopeOf(Type.Object({ shipping_rates: Type.Array(ShippingRateSchema) })) },
    },
  }, async (request) => envelope({ shipping_rates: await checkoutShippingRates(deps, request.params.storeURL, request.params.token) }));

  app.post('/storefront/:storeURL/checkouts/:token/complete', {
    config: { errors: { 400: 'Short stock (C7.1): no order', 409: 'The checkout is completed already', 410: 'The checkout has expired', 422: 'Something completion needs is missing, or what the checkout showed changed: the chosen rate (its price, title or code) or the total or discounts of its functions (the checkout now shows the new state: complete again to accept it); the message says which' } },
    schema: {
      tags, summary: 'Complete the checkout: 201 with the order, taken exactly as POST /orders takes one',
      params: checkout, response: { 201: envelopeOf(Type.Object({ order: OrderSchema })) },
    },
  }, async (request, reply) => reply.code(201).send(envelope({ order: await completeCheckout(deps, request.params.storeURL, request.params.token) }, 201)));
}
