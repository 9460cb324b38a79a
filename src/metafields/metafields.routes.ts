// Metafields: the App API list and bulk upsert (read_metafields / write_metafields; envelopes, C5.1),
// the merchant bulk upsert (C6.6) and the merchant read `GET /metafields/{id}` (C14.7).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { AppError, badRequest } from '../http/errors.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { isUuid } from '../ids.js';
import { findMetafield, listMetafields, metafieldView, type MetafieldFilter } from './metafields.repo.js';
import { bulkUpsert, MAX_BULK, resolveOwnerIds } from './metafields.service.js';
import { isOwnerType, OWNER_TYPES } from './types.js';

const bulkBody = Type.Object({
  metafields: Type.Optional(Type.Unknown({
    description: `1 to ${MAX_BULK} items { ownerType, ownerId, namespace, key, type, value }; all or nothing (400 naming the first invalid index)`,
  })),
});

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

export async function metafieldApiRoutes(api: FastifyInstance, { deps }: { deps: Deps }) {
  const tags = ['metafields'];

  api.get('/metafields.json', {
    config: { scope: 'read_metafields', shape: 'envelope' },
    schema: {
      tags, summary: 'List metafields, newest first; exact filters on all four yield at most one',
      querystring: Type.Object({
        ownerType: Type.Optional(Type.String()), ownerId: Type.Optional(Type.String()),
        namespace: Type.Optional(Type.String()), key: Type.Optional(Type.String()),
        page: Type.Optional(Type.String()), limit: Type.Optional(Type.String()),
      }),
    },
  }, async (request) => {
    const query = request.query as Record<string, unknown>;
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
    schema: { tags, summary: 'Create or update up to 250 metafields at once (C6.6)', body: bulkBody },
  }, async (request) => {
    const { storeId, appId } = apiCaller(request);
    const result = await deps.db.transaction((tx) => bulkUpsert(tx, storeId, appId, request.body, deps.clock.now()));
    return envelope(result);
  });
}

export async function metafieldAdminRoutes(admin: FastifyInstance, { deps }: { deps: Deps }) {
  admin.post('/metafields/bulk', {
    schema: {
      tags: ['merchant admin: metafields'],
      summary: 'Create or update up to 250 metafields at once (C6.6)', body: bulkBody,
    },
  }, async (request) => {
    const storeId = adminStoreId(request);
    const result = await deps.db.transaction((tx) => bulkUpsert(tx, storeId, null, request.body, deps.clock.now()));
    return envelope(result);
  });
}

/**
 * `GET /metafields/{id}` answers its errors with the exact messages of C14.7, so it is registered in
 * a surface of its own (metafield-read, src/surfaces/store-staff.ts) whose guard says `UNAUTHORIZED`
 * (401) and `FORBIDDEN` (403); here, `NOT_FOUND` (404) for a missing metafield or another store's.
 */
export async function metafieldReadRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  app.get('/metafields/:id', {
    config: { shape: 'envelope' },
    schema: {
      tags: ['merchant admin: metafields'], params: Type.Object({ id: Type.String() }),
      summary: "One metafield of the caller's store; errors UNAUTHORIZED, FORBIDDEN, NOT_FOUND (C14.7)",
    },
  }, async (request) => {
    const { id } = request.params as { id: string };
    const row = isUuid(id) ? await findMetafield(deps.db, id) : null;
    if (!row || row.store_id !== request.user!.storeId) throw new AppError('not_found', 'NOT_FOUND');
    return envelope(metafieldView(row));
  });
}
