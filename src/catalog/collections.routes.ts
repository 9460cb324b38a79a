// Collections on the App API (`POST /api/v1/collections.json`, write_products, bare body, errors
// body) and in the merchant admin (`POST /collections`, `POST /collections/{id}/products`, C7.1,
// C14.5; envelopes).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { adminStoreId, assertStoreAccess } from '../surfaces/merchant-admin.js';
import { notFound } from '../http/errors.js';
import { envelopeOf } from '../http/schemas.js';
import { envelope } from '../http/shapes.js';
import { typed } from '../http/typed.js';
import { isUuid } from '../ids.js';
import { assertSchemaPassed } from './reader-first.js';
import {
  addProducts, COLLECTION_BODY, CollectionBody, CollectionSchema, collectionView, findCollection, insertCollection, ProductIdsBody, readCollectionInput, readProductIds,
} from './collections.js';

// The bodies are judged by their readers first (422s for a collection, `productIds[i]` for an id),
// then by the schema (src/catalog/reader-first.ts); `config.bodyKey` unwraps `{ collection: ... }`.
const bodyConfig = { bodyKey: 'collection' };

export async function collectionApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  api.post('/collections.json', {
    config: { scope: 'write_products', shape: 'errors', ...bodyConfig, errors: { 422: 'A field is invalid, e.g. the title is missing (app-api.md Status codes)' } },
    attachValidation: true,
    schema: {
      tags: ['collections'], summary: 'Create a manual collection', body: CollectionBody,
      response: { 201: Type.Object({ collection: CollectionSchema }) },
    },
  }, async (request, reply) => {
    const input = readCollectionInput(request.body);
    assertSchemaPassed(request, 'unprocessable');
    const row = await insertCollection(deps.db, apiCaller(request).storeId, input, deps.clock.now());
    return reply.code(201).send({ collection: collectionView(row) });
  });
}

export async function collectionAdminRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  const tags = ['merchant admin: catalog'];

  admin.post('/collections', {
    config: { ...bodyConfig, errors: { 422: 'A field is invalid, e.g. the title is missing (app-api.md Status codes)' } },
    attachValidation: true,
    schema: {
      tags, summary: 'Create a manual collection (C7.1)',
      body: Type.Object({
        ...CollectionBody.properties,
        storeId: Type.Optional(Type.String({ description: 'platform operator only: the store to act for' })),
      }, { description: COLLECTION_BODY }),
      response: { 201: envelopeOf(CollectionSchema) },
    },
  }, async (request, reply) => {
    const storeId = adminStoreId(request);
    const input = readCollectionInput(request.body);
    assertSchemaPassed(request, 'unprocessable');
    const row = await insertCollection(deps.db, storeId, input, deps.clock.now());
    return reply.code(201).send(envelope(collectionView(row), 201));
  });

  admin.post('/collections/:id/products', {
    config: bodyConfig,
    attachValidation: true,
    schema: {
      tags, summary: 'Add products to a collection (C14.5)',
      params: Type.Object({ id: Type.String({ description: 'the collection UUID' }) }),
      body: ProductIdsBody,
      response: { 200: envelopeOf(CollectionSchema) },
    },
  }, async (request) => {
    const { id } = request.params;
    const refs = readProductIds(request.body);
    assertSchemaPassed(request);
    const row = await deps.db.transaction(async (tx) => {
      const collection = isUuid(id) ? await findCollection(tx, id) : null;
      if (!collection) throw notFound('Collection not found');
      assertStoreAccess(request, collection.store_id);
      return addProducts(tx, collection, refs, deps.clock.now());
    });
    return envelope(collectionView(row));
  });
}
