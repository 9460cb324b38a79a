// Collections on the App API (`POST /api/v1/collections.json`, write_products, bare body, errors
// body) and in the merchant admin (`POST /collections`, `POST /collections/{id}/products`, C7.1,
// C14.5; envelopes).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { adminStoreId, assertStoreAccess } from '../surfaces/merchant-admin.js';
import { notFound } from '../http/errors.js';
import { envelope } from '../http/shapes.js';
import { isUuid } from '../ids.js';
import { addProducts, collectionView, findCollection, insertCollection, readCollectionInput, readProductIds } from './collections.js';

const field = (description: string) => Type.Optional(Type.Unknown({ description }));
const collectionBody = Type.Object({
  title: field('string, required (422 without it)'),
  body_html: field('string (HTML)'),
  handle: field('string; default: the title lowercased, spaces replaced by -'),
  image: field('image URL (or { src, alt })'),
  template_suffix: field('string'),
  seo: field('{ title, description }'),
}, { description: 'Flat, or wrapped as `{ collection: { ... } }`' });

export async function collectionApiRoutes(api: FastifyInstance, { deps }: { deps: Deps }) {
  api.post('/collections.json', {
    config: { scope: 'write_products', shape: 'errors' },
    schema: { tags: ['collections'], summary: 'Create a manual collection', body: collectionBody },
  }, async (request, reply) => {
    const input = readCollectionInput(request.body);
    const row = await insertCollection(deps.db, apiCaller(request).storeId, input, deps.clock.now());
    return reply.code(201).send({ collection: collectionView(row) });
  });
}

export async function collectionAdminRoutes(admin: FastifyInstance, { deps }: { deps: Deps }) {
  const tags = ['merchant admin: catalog'];

  admin.post('/collections', {
    schema: { tags, summary: 'Create a manual collection (C7.1)', body: collectionBody },
  }, async (request, reply) => {
    const storeId = adminStoreId(request);
    const input = readCollectionInput(request.body);
    const row = await insertCollection(deps.db, storeId, input, deps.clock.now());
    return reply.code(201).send(envelope(collectionView(row), 201));
  });

  admin.post('/collections/:id/products', {
    schema: {
      tags, summary: 'Add products to a collection (C14.5)',
      params: Type.Object({ id: Type.String() }),
      body: Type.Object({ productIds: field('array of 1 to 250 product UUIDs of the store') }),
    },
  }, async (request) => {
    const { id } = request.params as { id: string };
    const refs = readProductIds(request.body);
    const row = await deps.db.transaction(async (tx) => {
      const collection = isUuid(id) ? await findCollection(tx, id) : null;
      if (!collection) throw notFound('Collection not found');
      assertStoreAccess(request, collection.store_id);
      return addProducts(tx, collection, refs, deps.clock.now());
    });
    return envelope(collectionView(row));
  });
}
