// App API `GET /api/v1/analytics/sales` (scope read_analytics): envelope `data` as app-api.md Store
// analytics; a bad range is a 400 envelope (C6.7).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { RANGES, resolveRange, salesAnalytics, SalesSchema } from './sales.js';

export async function analyticsApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  api.get('/analytics/sales', {
    config: { scope: 'read_analytics', shape: 'envelope' },
    schema: {
      tags: ['analytics'],
      summary: 'Sales over a range of UTC days (C6.7, C6.8): orders, customers, sessions, regions, sources; every day of the range present',
      querystring: Type.Object({
        range: Type.Optional(Type.String({ description: `${RANGES.join(', ')}; default last_7_days (the 7 days ending today, today included)` })),
        start_date: Type.Optional(Type.String({ description: 'custom range: first UTC day (ISO 8601), included' })),
        end_date: Type.Optional(Type.String({ description: 'custom range: last UTC day (ISO 8601), included' })),
      }),
      response: { 200: envelopeOf(SalesSchema) },
    },
  }, async (request) => {
    const range = resolveRange(request.query, deps.clock.now());
    return envelope(await salesAnalytics(deps.db, apiCaller(request).storeId, range));
  });
}
