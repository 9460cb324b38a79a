// Merchant admin customer entry (C7.1): `POST /customers`, the App API's fields, 201 envelope with
// the customer in its App API shape; emits customers/create.
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { customerAdminBody } from './customers.schemas.js';
import { createCustomer, CustomerSchema } from './customers.service.js';

export async function customerAdminRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  admin.post('/customers', {
    schema: {
      tags: ['merchant admin'], summary: 'Create a customer (C7.1); emits customers/create', body: customerAdminBody,
      response: { 201: envelopeOf(CustomerSchema) },
    },
  }, async (request, reply) => reply.code(201).send(envelope(await createCustomer(deps, adminStoreId(request), request.body), 201)));
}
