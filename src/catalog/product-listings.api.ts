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
import { appExtensions } from '../apps/apps.repo.js';
import { BLANK, has, idText, isCatalogId, unwrap } from './input.js';
import { storeProductId } from './products.repo.js';
import { upsertListing, type ListingRow } from './product-listings.repo.js';

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

    if ((await appExtensions(deps.db, caller.appId))?.salesChannel !== true) {
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

    const productId = ref && isCatalogId(ref) ? await storeProductId(deps.db, caller.storeId, ref) : null;
    if (!productId) throw badRequest('product_id does not name a product of this store', { product_id: ['not found'] });

    const now = deps.clock.now();
    // One statement: two concurrent first listings still make one row (one 201, one 200).
    const listing = await upsertListing(deps.db, { id: uuidv7(now.getTime()), storeId: caller.storeId, appId: caller.appId, productId, externalId, now });
    return reply.code(listing.inserted ? 201 : 200).send({ product_listing: listingView(listing) });
  });
}
