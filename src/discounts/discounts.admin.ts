// Merchant admin discount entry (C7.1, C14.4): `POST /discounts` (201) and `PUT /discounts/{id}`,
// envelopes whose `data` is the discount in its App API shape. Another store's discount -> 403.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { assertStoreAccess } from '../surfaces/merchant-admin.js';
import { envelope } from '../http/shapes.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { field } from '../content/content.schemas.js';
import { createDiscount, updateDiscount } from './discounts.service.js';

const tags = ['merchant admin'];
const discountBody = Type.Object({
  code: field('string, required on create, unique in the store (any case), no spaces'),
  type: field('Percentage, Flat, FreeShipping, BuyXGetY or Freebie; required on create'),
  status: field('Active (default) or Inactive'),
  discountPercentage: field('number, more than 0 and at most 100; required for Percentage'),
  discountAmount: field('number, more than 0; required for Flat'),
  minOrderTotal: field('number, default 0'),
  totalCoupons: field('integer, 0 (default) means unlimited'),
  usesPerCustomer: field('integer of at least 1, or null (default) for unlimited'),
  applyOnProducts: field('array of product UUIDs of the store'),
  startDate: field('ISO 8601 date-time, default now'),
  endDate: field('ISO 8601 date-time after startDate, or null (default) for no end'),
});

export async function discountAdminRoutes(admin: FastifyInstance, { deps }: { deps: Deps }) {
  admin.post('/discounts', {
    schema: { tags, summary: 'Create a discount (C7.1, C14.4)', body: discountBody },
  }, async (request, reply) => reply.code(201).send(envelope(await createDiscount(deps, adminStoreId(request), request.body), 201)));

  admin.put('/discounts/:id', {
    schema: { tags, summary: 'Update the fields sent of a discount (C7.1)', params: Type.Object({ id: Type.String() }), body: discountBody },
  }, async (request) => {
    const id = (request.params as { id: string }).id;
    return envelope(await updateDiscount(deps, id, request.body, (storeId) => assertStoreAccess(request, storeId)));
  });
}
