// Merchant admin product entry (C7.1): POST /products, PUT /products/{id}, DELETE /products/{id}.
// Envelopes whose `data` is the product in its App API shape; the same events as the App API.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { adminStoreId, assertStoreAccess } from '../surfaces/merchant-admin.js';
import { notFound } from '../http/errors.js';
import { envelopeOf } from '../http/schemas.js';
import { envelope } from '../http/shapes.js';
import { typed } from '../http/typed.js';
import { isCatalogId } from './input.js';
import { ProductSchema, productView } from './product-view.js';
import { lockProduct } from './products.repo.js';
import { adminCreateBody, adminUpdateBody, readAdminCreate, readAdminUpdate } from './products.input.js';
import { createProduct, deleteProduct, updateProduct } from './products.service.js';
import { productImageUrls, releaseUploads } from './upload-references.js';

const tags = ['merchant admin: catalog'];
const params = Type.Object({ id: Type.String({ description: 'product UUID or numeric id' }) });
const productEnvelope = envelopeOf(ProductSchema);

/** The product, locked, after the caller's store check: 404 when there is none, 403 for another store's. */
async function lockOwnProduct(tx: Queryable, request: FastifyRequest, id: string) {
  const product = isCatalogId(id) ? await lockProduct(tx, id) : null;
  if (!product) throw notFound('Product not found');
  assertStoreAccess(request, product.store_id);
  return product;
}

export async function productAdminRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  admin.post('/products', {
    config: { bodyKey: 'product' },
    schema: {
      tags, summary: 'Create a product with variants and images (C7.1); emits products/create', body: adminCreateBody,
      response: { 201: productEnvelope },
    },
  }, async (request, reply) => {
    const storeId = adminStoreId(request);
    const draft = readAdminCreate(request.body);
    const row = await deps.db.transaction((tx) => createProduct(tx, storeId, draft, deps.clock.now()));
    return reply.code(201).send(envelope(productView(row), 201));
  });

  admin.put('/products/:id', {
    config: { bodyKey: 'product' },
    schema: {
      tags, params, body: adminUpdateBody, response: { 200: productEnvelope },
      summary: 'Update a product (C7.1); emits products/update and inventory_levels/update',
    },
  }, async (request) => {
    const { id } = request.params;
    const { patch, variants } = readAdminUpdate(request.body);
    const row = await deps.db.transaction(async (tx) => {
      const product = await lockOwnProduct(tx, request, id);
      // Only `images` and the variants' `mainImageUrl` can drop the store's uploads; other changes
      // release none.
      const touchesImages = patch.images !== undefined || variants.some((v) => v.fields.main_image_url !== undefined);
      const before = touchesImages ? await productImageUrls(tx, product.id) : [];
      const now = deps.clock.now();
      const row = await updateProduct(tx, product, patch, variants, now);
      if (touchesImages) {
        const after = new Set(await productImageUrls(tx, product.id));
        await releaseUploads(tx, deps.config, product.store_id, before.filter((url) => !after.has(url)), now);
      }
      return row;
    });
    return envelope(productView(row));
  });

  admin.delete('/products/:id', {
    schema: {
      tags, params, response: { 200: productEnvelope },
      summary: 'Delete a product (C7.1); emits products/delete. `data` is the product as it was',
    },
  }, async (request) => {
    const { id } = request.params;
    const row = await deps.db.transaction(async (tx) => {
      const product = await lockOwnProduct(tx, request, id);
      return deleteProduct(tx, product, deps.clock.now());
    });
    return envelope(productView(row));
  });
}
