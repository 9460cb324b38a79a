// Merchant admin discount entry (C7.1, C14.4): `POST /discounts` (201) and `PUT /discounts/{id}`,
// envelopes whose `data` is the discount in its App API shape. Another store's discount -> 403.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { adminStoreId, assertStoreAccess } from '../surfaces/merchant-admin.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { createDiscount, discountCreateBody, DiscountSchema, discountUpdateBody, updateDiscount } from './discounts.service.js';

const tags = ['merchant admin'];
const params = Type.Object({ id: Type.String({ description: 'the discount id (couponId, a UUID); another value is not found' }) });

export async function discountAdminRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  admin.post('/discounts', {
    schema: { tags, summary: 'Create a discount (C7.1, C14.4)', body: discountCreateBody, response: { 201: envelopeOf(DiscountSchema) } },
  }, async (request, reply) => reply.code(201).send(envelope(await createDiscount(deps, adminStoreId(request), request.body), 201)));

  admin.put('/discounts/:id', {
    schema: {
      tags, summary: 'Update the fields sent of a discount (C7.1)', params, body: discountUpdateBody,
      response: { 200: envelopeOf(DiscountSchema) },
    },
  }, async (request) => envelope(await updateDiscount(deps, request.params.id, request.body, (storeId) => assertStoreAccess(request, storeId))));
}
