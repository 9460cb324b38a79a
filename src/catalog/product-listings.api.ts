// `POST /api/v1/product_listings.json` (write_products; C6.2): lists a product on the calling app's
// sales channel. The channel is the app on the store, and exists only when the app's manifest says
// `extensions.salesChannel: true`. 201 on the first listing, 200 when already listed (its
// `external_id` updated when one is sent). Errors body.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { badRequest } from '../http/errors.js';
import { uuidv7 } from '../ids.js';
import { BLANK, has, idText, isCatalogId, unwrap } from './input.js';

interface ListingRow {
  id: string;
  product_id: string;
  external_id: string | null;
  status: string;
  inserted: boolean;
}

const listingView = (l: ListingRow) => ({ id: l.id, product_id: l.product_id, external_id: l.external_id, status: l.status });

export async function productListingApiRoutes(api: FastifyInstance, { deps }: { deps: Deps }) {
  api.post('/product_listings.json', {
    config: { scope: 'write_products', shape: 'errors' },
    schema: {
      tags: ['product listings'],
      summary: "List a product on the app's sales channel (C6.2)",
      body: Type.Object({
        product_id: Type.Optional(Type.Unknown({ description: 'product UUID or numeric id, required' })),
        external_id: Type.Optional(Type.Unknown({ description: "the app's own id for the listing, stored as given" })),
      }, { description: 'Flat, or wrapped as `{ product_listing: { ... } }`' }),
    },
  }, async (request, reply) => {
    const caller = apiCaller(request);
    const body = unwrap(request.body, 'product_listing');

    const app = await deps.db.query<{ extensions: { salesChannel?: unknown } | null }>('SELECT extensions FROM apps WHERE id = $1', [caller.appId]);
    if (app.rows[0]?.extensions?.salesChannel !== true) {
      throw badRequest('This app has no sales channel: its manifest must declare extensions.salesChannel: true');
    }

    if (!has(body, 'product_id') || body.product_id === null || body.product_id === '') {
      throw badRequest(`product_id ${BLANK}`, { product_id: [BLANK] });
    }
    const ref = idText(body.product_id);
    let externalId: string | null | undefined;
    if (has(body, 'external_id')) {
      const e = body.external_id;
      if (e === null) externalId = null;
      else if (typeof e === 'string' && e.length <= 255) externalId = e;
      else if (typeof e === 'number' && Number.isFinite(e)) externalId = String(e);
      else throw badRequest('external_id must be a string', { external_id: ['must be a string of at most 255 characters'] });
    }

    const product = ref && isCatalogId(ref)
      ? (await deps.db.query<{ id: string }>(
        `SELECT id FROM products WHERE store_id = $1 AND ${ref.includes('-') ? 'id = $2::uuid' : 'num_id = $2::bigint'}`,
        [caller.storeId, ref],
      )).rows[0]
      : undefined;
    if (!product) throw badRequest('product_id does not name a product of this store', { product_id: ['not found'] });

    const now = deps.clock.now();
    // One statement: two concurrent first listings still make one row (one 201, one 200).
    const { rows } = await deps.db.query<ListingRow>(
      `INSERT INTO product_listings (id, store_id, app_id, product_id, external_id, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'active', $6, $6)
       ON CONFLICT (app_id, product_id) DO UPDATE
         SET external_id = CASE WHEN $7 THEN EXCLUDED.external_id ELSE product_listings.external_id END, updated_at = $6
       RETURNING id, product_id, external_id, status, (xmax = 0) AS inserted`,
      [uuidv7(now.getTime()), caller.storeId, caller.appId, product.id, externalId ?? null, now, externalId !== undefined],
    );
    const listing = rows[0];
    return reply.code(listing.inserted ? 201 : 200).send({ product_listing: listingView(listing) });
  });
}
