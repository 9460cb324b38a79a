// App API discounts (app-api.md `GET /api/v1/discounts.json`): envelope whose `data` carries flat
// counters `{ discounts, total, page, limit }`; `count` and `pagination` stay null.
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { parsePage } from '../http/paging.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf, pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { discountListFilters, DiscountListSchema, listDiscountPage } from './discounts.service.js';

export async function discountApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  api.get('/discounts.json', {
    config: { scope: 'read_discounts', shape: 'envelope' },
    schema: {
      tags: ['discounts'],
      summary: 'Discounts, newest first; status computed on the service clock (C14.4); code matched in part, any case',
      querystring: pagedQuery(discountListFilters),
      response: { 200: envelopeOf(DiscountListSchema) },
    },
  }, async (request) => envelope(await listDiscountPage(deps, apiCaller(request).storeId, request.query, parsePage(request.query))));
}
