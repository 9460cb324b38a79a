// Metafields: the App API list and bulk upsert (read_metafields / write_metafields; envelopes, C5.1),
// the merchant bulk upsert (C6.6) and the merchant read `GET /metafields/{id}` (C14.7).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { AppError, badRequest } from '../http/errors.js';
import { parsePage } from '../http/paging.js';
import { envelopeListOf, envelopeOf, nullable, pagedQuery, StringEnum } from '../http/schemas.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { typed } from '../http/typed.js';
import { isUuid } from '../ids.js';
import { assertSchemaPassed } from '../catalog/reader-first.js';
import { findMetafield, listMetafields, MetafieldSchema, metafieldView, type MetafieldFilter } from './metafields.repo.js';
import { checkBulk, MAX_BULK, resolveOwnerIds, writeBulk } from './metafields.service.js';
import { isOwnerType, METAFIELD_TYPES, OWNER_TYPES } from './types.js';

/**
 * One item of a bulk upsert, as `readItem` (metafields.service.ts) reads it. The reader judges a
 * batch first: it names the lowest invalid index (`metafields[3]: ...`) across every kind of
 * problem, owner lookups included, which a schema cannot say (src/catalog/reader-first.ts).
 */
const BulkItem = Type.Object({
  ownerType: Type.Optional(nullable(StringEnum(OWNER_TYPES, { description: 'required (or its alias owner_type)' }))),
  owner_type: Type.Optional(nullable(StringEnum(OWNER_TYPES, { description: 'alias of ownerType' }))),
  ownerId: Type.Optional(Type.Unsafe<string | number | null>({
    type: ['string', 'number', 'null'],
    description: 'required (or its alias owner_id): the owner UUID, the numeric id of a product or variant, or the store id for shop; the owner must be of the store',
  })),
  owner_id: Type.Optional(Type.Unsafe<string | number | null>({ type: ['string', 'number', 'null'], description: 'alias of ownerId' })),
  namespace: Type.String({ pattern: '^[A-Za-z0-9_.:$-]{1,255}$', description: '1 to 255 letters, digits or _ - . : $' }),
  key: Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$', description: '1 to 64 letters, digits or _ - .' }),
  type: StringEnum(METAFIELD_TYPES),
  // Any JSON value may be sent: whether it fits is a question of `type` (C14.6, types.ts).
  value: Type.Unknown({ description: 'the value: its raw text, or a JSON value of the type (a number, true or false, any JSON for json); at most 65536 characters stored' }),
});

const BulkBody = Type.Object({
  metafields: Type.Array(BulkItem, { minItems: 1, maxItems: MAX_BULK, description: `1 to ${MAX_BULK} items; all or nothing (400 naming the first invalid index); an existing (owner, namespace, key) is updated` }),
});
const bulkResponse = envelopeOf(Type.Object({
  metafields: Type.Array(MetafieldSchema, { description: 'in the order sent' }),
  created: Type.Integer(),
  updated: Type.Integer(),
}));

const text = (v: string | undefined) => (v !== undefined && v !== '' ? v : undefined);

export async function metafieldApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  const tags = ['metafields'];

  api.get('/metafields.json', {
    config: { scope: 'read_metafields', shape: 'envelope' },
    schema: {
      tags, summary: 'List metafields, newest first; exact filters on all four yield at most one',
      querystring: pagedQuery({
        ownerType: Type.Optional(Type.String({ description: `one of ${OWNER_TYPES.join(', ')} (another value -> 400)` })),
        owner_type: Type.Optional(Type.String({ description: 'alias of ownerType' })),
        ownerId: Type.Optional(Type.String({ description: 'the owner UUID (or the numeric id of a product or variant, with ownerType)' })),
        owner_id: Type.Optional(Type.String({ description: 'alias of ownerId' })),
        namespace: Type.Optional(Type.String()),
        key: Type.Optional(Type.String()),
      }),
      response: { 200: envelopeListOf(Type.Object({ metafields: Type.Array(MetafieldSchema) })) },
    },
  }, async (request) => {
    const { query } = request;
    const { storeId } = apiCaller(request);
    const filter: MetafieldFilter = {
      ownerType: text(query.ownerType ?? query.owner_type),
      ownerId: text(query.ownerId ?? query.owner_id),
      namespace: text(query.namespace),
      key: text(query.key),
    };
    if (filter.ownerType !== undefined && !isOwnerType(filter.ownerType)) throw badRequest(`ownerType must be one of ${OWNER_TYPES.join(', ')}`);
    const page = parsePage(query);
    if (filter.ownerId !== undefined) {
      // Owners are stored by UUID; a product or variant may be named by its numeric id too.
      if (filter.ownerType && isOwnerType(filter.ownerType)) {
        const ids = await resolveOwnerIds(deps.db, storeId, filter.ownerType, [filter.ownerId]);
        filter.ownerId = ids.get(filter.ownerId) ?? filter.ownerId.toLowerCase();
      } else {
        filter.ownerId = filter.ownerId.toLowerCase();
      }
    }
    const { rows, total } = await listMetafields(deps.db, storeId, filter, page.limit, page.offset);
    return envelopeList({ metafields: rows.map(metafieldView) }, page, rows.length, total);
  });

  api.post('/metafields/bulk.json', {
    config: { scope: 'write_metafields', shape: 'envelope' },
    attachValidation: true,
    schema: { tags, summary: 'Create or update up to 250 metafields at once (C6.6)', body: BulkBody, response: { 200: bulkResponse } },
  }, async (request) => {
    const { storeId, appId } = apiCaller(request);
    const result = await deps.db.transaction(async (tx) => {
      const items = await checkBulk(tx, storeId, request.body);
      assertSchemaPassed(request);
      return writeBulk(tx, storeId, appId, items, deps.clock.now());
    });
    return envelope(result);
  });
}

export async function metafieldAdminRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  admin.post('/metafields/bulk', {
    attachValidation: true,
    schema: {
      tags: ['merchant admin: metafields'],
      summary: 'Create or update up to 250 metafields at once (C6.6)',
      body: Type.Object({
        ...BulkBody.properties,
        storeId: Type.Optional(Type.String({ description: 'platform operator only: the store to act for' })),
      }),
      response: { 200: bulkResponse },
    },
  }, async (request) => {
    const storeId = adminStoreId(request);
    const result = await deps.db.transaction(async (tx) => {
      const items = await checkBulk(tx, storeId, request.body);
      assertSchemaPassed(request);
      return writeBulk(tx, storeId, null, items, deps.clock.now());
    });
    return envelope(result);
  });
}

/**
 * `GET /metafields/{id}` answers its errors with the exact messages of C14.7, so it is registered in
 * a surface of its own (metafield-read, src/surfaces/store-staff.ts) whose guard says `UNAUTHORIZED`
 * (401) and `FORBIDDEN` (403); here, `NOT_FOUND` (404) for a missing metafield or another store's.
 */
export async function metafieldReadRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);
  app.get('/metafields/:id', {
    config: { shape: 'envelope' },
    schema: {
      tags: ['merchant admin: metafields'], params: Type.Object({ id: Type.String({ description: 'the metafield UUID' }) }),
      summary: "One metafield of the caller's store; errors UNAUTHORIZED, FORBIDDEN, NOT_FOUND (C14.7)",
      response: { 200: envelopeOf(MetafieldSchema) },
    },
  }, async (request) => {
    const { id } = request.params;
    const row = isUuid(id) ? await findMetafield(deps.db, id) : null;
    if (!row || row.store_id !== request.user!.storeId) throw new AppError('not_found', 'NOT_FOUND');
    return envelope(metafieldView(row));
  });
}
