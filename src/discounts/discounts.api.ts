// App API discounts (app-api.md `GET /api/v1/discounts.json`): envelope whose `data` carries flat
// counters `{ discounts, total, page, limit }`; `count` and `pagination` stay null.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { parsePage } from '../http/paging.js';
import { envelope } from '../http/shapes.js';
import { listDiscountPage } from './discounts.service.js';

export async function discountApiRoutes(api: FastifyInstance, { deps }: { deps: Deps }) {
  api.get('/discounts.json', {
    config: { scope: 'read_discounts', shape: 'envelope' },
    schema: {
      tags: ['discounts'],
      summary: 'Discounts, newest first; status computed on the service clock (C14.4); code matched in part, any case',
      querystring: Type.Object({
        page: Type.Optional(Type.String()),
        limit: Type.Optional(Type.String()),
        status: Type.Optional(Type.String({ description: 'active, expired, scheduled or disabled' })),
        code: Type.Optional(Type.String({ description: 'part of the code, any case' })),
      }),
    },
  }, async (request) => {
    const query = request.query as Record<string, unknown>;
    return envelope(await listDiscountPage(deps, apiCaller(request).storeId, query, parsePage(query)));
  });
}
