// Merchant admin: the store's address (C15.4), `GET` and `PUT /stores/address`, envelopes with
// `data.address`. The platform operator names the store with `storeId` (query or body), as on
// every admin route (src/surfaces/merchant-admin.ts).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { typed } from '../http/typed.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf, nullable } from '../http/schemas.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { findStoreAddress, readStoreAddress, saveStoreAddress } from './store-address.js';

const tags = ['merchant admin'];
const MAX_TEXT = 255;

const text = (description: string) => nullable(Type.String({ maxLength: MAX_TEXT }), { description });

const AddressSchema = Type.Object({
  address1: text('street address'),
  address2: text('apartment, suite, unit'),
  city: text('city'),
  province: text('state, province or region'),
  country: nullable(Type.String({ minLength: 2, maxLength: 2 }), { description: 'ISO 3166-1 alpha-2 country code, upper case' }),
  zip: text('postal code'),
  phone: text('phone number'),
});

const addressBody = Type.Object({
  address1: Type.Optional(text('street address')),
  address2: Type.Optional(text('apartment, suite, unit')),
  city: Type.Optional(text('city')),
  province: Type.Optional(text('state, province or region')),
  country: Type.Optional(text('ISO 3166-1 alpha-2 country code ("us" is taken as "US"); another value -> 400')),
  zip: Type.Optional(text('postal code')),
  phone: Type.Optional(text('phone number')),
  storeId: Type.Optional(Type.String({ description: 'the store, for the platform operator only' })),
}, { description: 'The whole address: a field left out, null or blank is unknown (null)' });

const storeQuery = Type.Object({ storeId: Type.Optional(Type.String({ description: 'the store, for the platform operator only' })) });
const addressResponse = envelopeOf(Type.Object({ address: AddressSchema }));

export async function storeAddressRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  admin.get('/stores/address', {
    schema: { tags, summary: "The store's address, the origin of shipping rate requests (C15.4)", querystring: storeQuery, response: { 200: addressResponse } },
  }, async (request) => envelope({ address: await findStoreAddress(deps.db, adminStoreId(request)) }));

  admin.put('/stores/address', {
    schema: { tags, summary: "Replace the store's address (C15.4)", body: addressBody, response: { 200: addressResponse } },
  }, async (request) => {
    const storeId = adminStoreId(request);
    return envelope({ address: await saveStoreAddress(deps, storeId, readStoreAddress(request.body)) });
  });
}
