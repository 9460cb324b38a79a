// App API customers (app-api.md `POST /api/v1/customers.json`; C6.3 list, get, update, delete).
// Bare bodies under `customer`/`customers`, errors in the errors body (C5.1), list paging in the
// `Link` header (C5.4). Tokens are bound to one store: another store's customer is not found (404).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { linkHeader, parsePage } from '../http/paging.js';
import { EmptyBody, PagingQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { customerCreateBody, customerUpdateBody } from './customers.schemas.js';
import { createCustomer, CustomerSchema, deleteCustomer, getCustomer, listCustomerPage, updateCustomer } from './customers.service.js';

const tags = ['customers'];
const params = Type.Object({ id: Type.String({ description: 'customer id (UUID); another value is not found' }) });
const customerBody = Type.Object({ customer: CustomerSchema });

export async function customerApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  const read = { scope: 'read_customers', shape: 'errors' } as const;
  const write = { scope: 'write_customers', shape: 'errors' } as const;

  api.post('/customers.json', {
    config: { ...write, bodyKey: 'customer' },
    schema: {
      tags, summary: 'Create a customer: 201 { customer }; emits customers/create', body: customerCreateBody,
      response: { 201: customerBody },
    },
  }, async (request, reply) => reply.code(201).send({ customer: await createCustomer(deps, apiCaller(request).storeId, request.body) }));

  api.get('/customers.json', {
    config: { ...read, pagedByLink: true },
    schema: {
      tags, summary: 'Customers, newest first; paging in the Link header (C5.4)',
      querystring: PagingQuery,
      response: { 200: Type.Object({ customers: Type.Array(CustomerSchema) }) },
    },
  }, async (request, reply) => {
    const page = parsePage(request.query);
    const { customers, hasNext } = await listCustomerPage(deps, apiCaller(request).storeId, page);
    const link = linkHeader(deps.config.baseUrl, '/api/v1/customers.json', {}, page, hasNext);
    if (link) reply.header('Link', link);
    return { customers };
  });

  api.get('/customers/:id.json', {
    config: read,
    schema: { tags, params, summary: 'One customer', response: { 200: customerBody } },
  }, async (request) => ({ customer: await getCustomer(deps, apiCaller(request).storeId, request.params.id) }));

  api.put('/customers/:id.json', {
    config: { ...write, bodyKey: 'customer' },
    schema: {
      tags, params, summary: 'Update the fields sent; emits customers/update', body: customerUpdateBody,
      response: { 200: customerBody },
    },
  }, async (request) => ({ customer: await updateCustomer(deps, apiCaller(request).storeId, request.params.id, request.body) }));

  api.delete('/customers/:id.json', {
    config: write,
    schema: {
      tags, params, summary: 'Delete a customer (orders are kept, unlinked): 200 {}; emits customers/delete',
      response: { 200: EmptyBody },
    },
  }, async (request) => {
    await deleteCustomer(deps, apiCaller(request).storeId, request.params.id);
    return {};
  });
}
