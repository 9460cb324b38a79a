// App API products (C6.1): list, get, create, update (app-api.md PUT /products/{id}.json) and
// delete, all bare bodies with the errors body for errors. `{id}` is the UUID or the numeric id.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { envelopeError, errorShapeSchemas } from '../http/shapes.js';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { notFound, unprocessable } from '../http/errors.js';
import { linkHeader, parsePage } from '../http/paging.js';
import { EmptyBody, pagedQuery } from '../http/schemas.js';
import { textSchema } from './input.js';
import { typed } from '../http/typed.js';
import { isUuid } from '../ids.js';
import { ProductSchema, productView } from './product-view.js';
import { findProduct, listProducts, lockProduct, PRODUCT_STATUSES } from './products.repo.js';
import { productFieldSchemas, productLevelSchemas, readApiCreate, readApiUpdate } from './products.input.js';
import { createProduct, deleteProduct, updateProduct } from './products.service.js';

const tags = ['products'];
const isProductRef = (id: string) => isUuid(id) || /^\d{1,15}$/.test(id);
const params = Type.Object({ id: Type.String({ description: 'the product UUID or numeric id' }) });
const createBody = Type.Object({
  title: textSchema('required (400 `{ errors: { title: ["can\'t be blank"] } }` without it)', 255),
  ...productFieldSchemas,
  ...productLevelSchemas,
}, { description: 'Flat, or wrapped as `{ product: { ... } }`' });
const updateBody = Type.Object({
  title: Type.Optional(textSchema('a new title', 255)),
  ...productFieldSchemas,
  variants: Type.Optional(Type.Array(Type.Unknown(), {
    description: 'only the first entry is read: `{ price, compare_at_price, inventory_quantity }` (amounts as decimal strings or numbers, or null; stock a whole number from 0), applied onto the product-level price, compare-at price and stock; variant rows are not modified, and later entries are ignored unread',
  })),
}, { description: 'All optional; `vendor` and `product_type` come from the category and cannot be set. Flat, or wrapped as `{ product: { ... } }`' });
const productBody = Type.Object({ product: ProductSchema });

export async function productApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  api.get('/products.json', {
    config: { scope: 'read_products', shape: 'errors', pagedByLink: true, errors: { 422: 'status is not active, draft or archived (C6.1)' } },
    schema: {
      tags, summary: 'List products, newest first (C6.1)',
      querystring: pagedQuery({ status: Type.Optional(Type.String({ description: 'active, draft or archived (another value -> 422)' })) }),
      response: { 200: Type.Object({ products: Type.Array(ProductSchema) }) },
    },
  }, async (request, reply) => {
    const { status } = request.query;
    if (status !== undefined && !(PRODUCT_STATUSES as readonly string[]).includes(status)) {
      throw unprocessable('status must be active, draft or archived', { status: ['must be active, draft or archived'] });
    }
    const page = parsePage(request.query);
    const { rows, hasNext } = await listProducts(deps.db, apiCaller(request).storeId, { status, limit: page.limit, offset: page.offset });
    const link = linkHeader(deps.config.baseUrl, '/api/v1/products.json', { status }, page, hasNext);
    if (link) reply.header('Link', link);
    return { products: rows.map(productView) };
  });

  api.get('/products/:id.json', {
    config: { scope: 'read_products', shape: 'errors' },
    schema: { tags, summary: 'One product by UUID or numeric id', params, response: { 200: productBody } },
  }, async (request) => {
    const { id } = request.params;
    const product = isProductRef(id) ? await findProduct(deps.db, apiCaller(request).storeId, id) : null;
    if (!product) throw notFound('Product not found');
    return { product: productView(product) };
  });

  api.post('/products.json', {
    config: { scope: 'write_products', shape: 'errors', bodyKey: 'product' },
    schema: { tags, summary: 'Create a product (C6.1); emits products/create', body: createBody, response: { 201: productBody } },
  }, async (request, reply) => {
    const draft = readApiCreate(request.body);
    const { storeId } = apiCaller(request);
    const row = await deps.db.transaction((tx) => createProduct(tx, storeId, draft, deps.clock.now()));
    return reply.code(201).send({ product: productView(row) });
  });

  api.put('/products/:id.json', {
    config: { scope: 'write_products', shape: 'errors', bodyKey: 'product' },
    schema: {
      tags, params, body: updateBody, response: { 200: productBody },
      summary: 'Update a product; emits products/update (and inventory_levels/update when the stock changes)',
    },
  }, async (request) => {
    const { id } = request.params;
    const patch = readApiUpdate(request.body);
    const { storeId } = apiCaller(request);
    const row = await deps.db.transaction(async (tx) => {
      const product = isProductRef(id) ? await lockProduct(tx, id, storeId) : null;
      if (!product) throw notFound('Product not found');
      return updateProduct(tx, product, patch, [], deps.clock.now());
    });
    return { product: productView(row) };
  });

  api.delete('/products/:id.json', {
    config: { scope: 'write_products', shape: 'errors' },
    schema: { tags, params, summary: 'Delete a product (C6.1); emits products/delete', response: { 200: EmptyBody } },
  }, async (request) => {
    const { id } = request.params;
    const { storeId } = apiCaller(request);
    await deps.db.transaction(async (tx) => {
      const product = isProductRef(id) ? await lockProduct(tx, id, storeId) : null;
      if (!product) throw notFound('Product not found');
      await deleteProduct(tx, product, deps.clock.now());
    });
    return {};
  });
}

const FILES_UNAVAILABLE = 'The files endpoint is not available yet';

/** Whether a raw URL is one of the file endpoints' (`/api/v1/files.json`, `/api/v1/files`, `/api/v1/files/...`). */
export const isFilesUrl = (url: string) => /^\/api\/v1\/files(?:\.json|\/[^?]*)?\/?(?:\?|$)/.test(url);

/**
 * C6.9's answer to a request under /api/v1/files that Fastify refused before routing (a path it
 * cannot percent-decode): "any request" is the 404, as a malformed body is, not a 400 about the URL.
 */
export const filesUnavailable = () => notFound(FILES_UNAVAILABLE);

/**
 * C6.9: the file endpoints are planned, not available: any request under /api/v1/files is a 404
 * envelope after authentication, whatever its method or body. The body is never parsed here, so the
 * planned multipart upload (no multipart parser exists) or a malformed JSON body gets the 404, not a
 * 400 about a body nothing would read. Registered as its own plugin, so the parser stays local.
 */
export async function fileApiRoutes(api: FastifyInstance) {
  api.removeAllContentTypeParsers();
  // Node discards an unread request body once the response is finished.
  api.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  // Answered directly rather than thrown: this 404 is the App API's cheapest authenticated path,
  // and a thrown error costs a rejected promise on every request. The body never changes, so it is
  // serialised once.
  const body = JSON.stringify(envelopeError(404, FILES_UNAVAILABLE));
  const handler = (_request: FastifyRequest, reply: FastifyReply) => reply.code(404).type('application/json; charset=utf-8').send(body);
  const documented = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];
  // Every other method Fastify routes (OPTIONS, TRACE, WebDAV...), hidden from OpenAPI, which has no
  // place for most of them; HEAD comes with GET.
  const others = api.supportedMethods.filter((m) => !documented.includes(m) && m !== 'HEAD');
  for (const url of ['/files.json', '/files', '/files/*']) {
    const config = { shape: 'envelope' as const };
    // One route per documented method, so each is its own operation in the reference.
    for (const method of documented) {
      const summary = `Reserved for the asset library (app-api.md): every call answers 404`;
      api.route({ method, url, config, schema: { tags: ['files'], summary, hide: url !== '/files.json', response: { 404: errorShapeSchemas.envelope } }, handler });
    }
    api.route({ method: others, url, config, schema: { hide: true }, handler });
  }
}
