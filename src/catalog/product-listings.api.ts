// `POST /api/v1/product_listings.json` (write_products; C6.2): lists a product on the calling app's
// sales channel. The channel is the app on the store, and exists only when the app's manifest says
// `extensions.salesChannel: true`. 201 on the first listing, 200 when already listed (its
// `external_id` updated when one is sent). Errors body.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { isForeignKeyViolation } from '../db/errors.js';
import { badRequest } from '../http/errors.js';
import { nullable } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { uuidv7 } from '../ids.js';
import { longerThan } from '../text.js';
import { appExtensions } from '../apps/apps.repo.js';
import { BLANK, has, idText, isCatalogId, unwrap } from './input.js';
import { storeProductId } from './products.repo.js';
import { assertSchemaPassed } from './reader-first.js';
import { upsertListing, type ListingRow } from './product-listings.repo.js';

const productNotFound = () => badRequest('product_id does not name a product of this store', { product_id: ['not found'] });

const listingView = (l: ListingRow) => ({ id: l.id, product_id: l.product_id, external_id: l.external_id, status: l.status });

/** app-api.md Product listing, as `listingView` writes it. */
const ListingSchema = Type.Object({
  id: Type.String({ description: 'the listing UUID' }),
  product_id: Type.String({ description: 'the product UUID' }),
  external_id: nullable(Type.String({ description: "the app's own id for the listing" })),
  status: Type.String({ description: 'active' }),
});
const listingBody = Type.Object({ product_listing: ListingSchema });

const listingInput = Type.Object({
  product_id: Type.Unsafe<string | number | null>({
    type: ['string', 'number', 'null'],
    description: 'the product UUID or numeric id (text or a whole number); required',
    'x-error': { type: 'not found' },
  }),
  external_id: Type.Optional(Type.Unsafe<string | number | null>({
    type: ['string', 'number', 'null'], maxLength: 255,
    description: "the app's own id for the listing, stored as given (a number as its text); null clears it; absent keeps the listing's",
    'x-error': 'must be a string of at most 255 characters',
  })),
}, { description: 'Flat, or wrapped as `{ product_listing: { ... } }`' });

export async function productListingApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  api.post('/product_listings.json', {
    config: { scope: 'write_products', shape: 'errors', bodyKey: 'product_listing' },
    // The sales channel is checked before the body is judged (src/catalog/reader-first.ts).
    attachValidation: true,
    schema: {
      tags: ['product listings'],
      summary: "List a product on the app's sales channel (C6.2): 201 on the first listing, 200 when already listed",
      body: listingInput,
      response: { 201: listingBody, 200: listingBody },
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
      else if (typeof e === 'string' && !longerThan(e, 255)) externalId = e;
      else if (typeof e === 'number' && Number.isFinite(e)) externalId = String(e);
      else throw badRequest('external_id must be a string', { external_id: ['must be a string of at most 255 characters'] });
    }

    const productId = ref && isCatalogId(ref) ? await storeProductId(deps.db, caller.storeId, ref) : null;
    if (!productId) throw productNotFound();
    assertSchemaPassed(request);

    const now = deps.clock.now();
    // One statement: two concurrent first listings still make one row (one 201, one 200).
    let listing: ListingRow;
    try {
      listing = await upsertListing(deps.db, { id: uuidv7(now.getTime()), storeId: caller.storeId, appId: caller.appId, productId, externalId, now });
    } catch (err) {
      // The product was deleted after the look-up above: the same answer as an unknown product, not a 500.
      if (isForeignKeyViolation(err, 'product_listings_product_id_fkey')) throw productNotFound();
      throw err;
    }
    return reply.code(listing.inserted ? 201 : 200).send({ product_listing: listingView(listing) });
  });
}
