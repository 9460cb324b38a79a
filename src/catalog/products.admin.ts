// Merchant admin product entry (C7.1): POST /products, PUT /products/{id}, DELETE /products/{id}.
// Envelopes whose `data` is the product in its App API shape; the same events as the App API.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { adminStoreId, assertStoreAccess } from '../surfaces/merchant-admin.js';
import { notFound } from '../http/errors.js';
import { envelope } from '../http/shapes.js';
import { isCatalogId } from './input.js';
import { productView } from './product-view.js';
import { lockProduct } from './products.repo.js';
import { readAdminCreate, readAdminUpdate } from './products.input.js';
import { createProduct, deleteProduct, updateProduct } from './products.service.js';

const tags = ['merchant admin: catalog'];
const field = (description: string) => Type.Optional(Type.Unknown({ description }));
const params = Type.Object({ id: Type.String({ description: 'product UUID or numeric id' }) });

const productBody = Type.Object({
  title: field('string; required on create'),
  body_html: field('string'),
  handle: field('string'),
  status: field('active, draft or archived'),
  tags: field('array of strings'),
  price: field('decimal string ("19.90")'),
  compare_at_price: field('decimal string or null'),
  inventory_quantity: field('integer >= 0'),
  sku: field('string'),
  category: field('string: sets vendor and product_type'),
  images: field('array of image URLs (replaces the images on update)'),
  variants: field('array of { name, value, price, discountPrice, stock, skuId, weight, weightUnit } with numbers (price: 19.9); on update an entry with varientId changes that variant, one without adds a variant'),
  storeId: field('platform operator only: the store to act for'),
});

/** The product, locked, after the caller's store check: 404 when there is none, 403 for another store's. */
async function lockOwnProduct(tx: Queryable, request: FastifyRequest, id: string) {
  const product = isCatalogId(id) ? await lockProduct(tx, id) : null;
  if (!product) throw notFound('Product not found');
  assertStoreAccess(request, product.store_id);
  return product;
}

export async function productAdminRoutes(admin: FastifyInstance, { deps }: { deps: Deps }) {
  admin.post('/products', {
    schema: { tags, summary: 'Create a product with variants and images (C7.1); emits products/create', body: productBody },
  }, async (request, reply) => {
    const storeId = adminStoreId(request);
    const draft = readAdminCreate(request.body);
    const row = await deps.db.transaction((tx) => createProduct(tx, storeId, draft, deps.clock.now()));
    return reply.code(201).send(envelope(productView(row), 201));
  });

  admin.put('/products/:id', {
    schema: { tags, params, body: productBody, summary: 'Update a product (C7.1); emits products/update and inventory_levels/update' },
  }, async (request) => {
    const { id } = request.params as { id: string };
    const { patch, variants } = readAdminUpdate(request.body);
    const row = await deps.db.transaction(async (tx) => {
      const product = await lockOwnProduct(tx, request, id);
      return updateProduct(tx, product, patch, variants, deps.clock.now());
    });
    return envelope(productView(row));
  });

  admin.delete('/products/:id', {
    schema: { tags, params, summary: 'Delete a product (C7.1); emits products/delete. `data` is the product as it was' },
  }, async (request) => {
    const { id } = request.params as { id: string };
    const row = await deps.db.transaction(async (tx) => deleteProduct(tx, await lockOwnProduct(tx, request, id), deps.clock.now()));
    return envelope(productView(row));
  });
}
