// Merchant pages (issue 15) for the store's MERCHANT, STAFF_ADMIN and MANAGER: the store's
// notifications (C9.5, as `GET /notifications`), its address (C15.4, as `GET`/`PUT /stores/address`)
// and its shipping zones (the App API's zone service, C6.10). Each calls the service the API's route
// calls, for the signed-in user's own store; another store's zone is "not found", as an unknown one.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { listNotifications } from '../notifications/notifications.repo.js';
import { ADDRESS_FIELDS, findStoreAddress, readStoreAddress, saveStoreAddress, type StoreAddress } from '../stores/store-address.js';
import { createZone, deleteZone, getZone, listZones, updateZone, ZONE_TYPES, type ZoneBody, type ZoneView } from '../shipping/zones.js';
import { fieldError } from '../content/fields.js';
import { notFound } from '../http/errors.js';
import { parsePage } from '../http/paging.js';
import { pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { longerThan } from '../text.js';
import { STORE_ROLES } from '../http/user-auth.js';
import { errorsByField, formRefusal } from './refusals.js';
import { page } from './render.js';

const merchant = { roles: STORE_ROLES };
const text = Type.Optional(Type.String());
const Csrf = Type.Object({ _csrf: text });

const storeOf = (request: FastifyRequest) => {
  const storeId = request.dashboardUser?.storeId;
  if (!storeId) throw notFound('No store');
  return storeId;
};

export async function settingsPages(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  // --- notifications (C9.5) ------------------------------------------------------------------

  app.get('/store/notifications', { config: merchant, schema: { querystring: pagedQuery({}) } }, async (request, reply) => {
    const paging = parsePage(request.query, { limit: 25 });
    const { notifications, total } = await listNotifications(deps.db, storeOf(request), { limit: paging.limit, offset: paging.offset });
    return page(deps, request, reply, 'store-notifications', { title: 'Notifications', notifications, paged: { page: paging.page, limit: paging.limit, total } });
  });

  // --- the store's address (C15.4) -----------------------------------------------------------

  const addressPage = async (request: FastifyRequest, reply: FastifyReply, values: Partial<Record<string, string | null>>, errors: Record<string, string>, notice: string | null, status = 200) =>
    page(deps, request, reply, 'store-address', { title: 'Store address', values, errors, notice }, status);

  app.get('/store/address', { config: merchant, schema: { querystring: Type.Object({ saved: text }) } }, async (request, reply) =>
    addressPage(request, reply, await findStoreAddress(deps.db, storeOf(request)), {}, request.query.saved ? 'Address saved.' : null));

  // The C15.4 fields, written out so the body's type is known (ADDRESS_FIELDS lists the same).
  const AddressForm = Type.Object({ _csrf: text, address1: text, address2: text, city: text, province: text, country: text, zip: text, phone: text });
  app.post('/store/address', { config: merchant, schema: { body: AddressForm } }, async (request, reply) => {
    const body: Partial<Record<(typeof ADDRESS_FIELDS)[number], string>> = request.body;
    const given: Partial<StoreAddress> = {};
    for (const key of ADDRESS_FIELDS) given[key] = body[key] ?? null;
    try {
      // The API's schema holds each field to 255 characters; the form says so in the service's words.
      // Characters as the schema counts them (code points): `length` counts a character outside the
      // BMP twice, and the page refused what the API takes. Counted as sent, before the service
      // trims, as the schema counts them: counted after, the page took what the API refuses.
      for (const key of ADDRESS_FIELDS) if (longerThan(given[key] ?? '', 255)) throw fieldError(key, 'is too long (maximum 255 characters)');
      await saveStoreAddress(deps, storeOf(request), readStoreAddress(given));
    } catch (err) {
      return addressPage(request, reply, given, errorsByField(formRefusal(err, reply, ['bad_request'])), null, 400);
    }
    return reply.redirect('/dashboard/store/address?saved=1', 303);
  });

  // --- shipping zones (C6.10) ----------------------------------------------------------------

  const ZoneParams = Type.Object({ zoneId: Type.String() });
  const ZoneForm = Type.Object({
    _csrf: text, name: text, countries: text, description: text, price: text, type: text, digitalProd: text,
    minWeight: text, maxWeight: text, minPrice: text, maxPrice: text,
  });
  type ZoneFormValues = Partial<Record<'name' | 'countries' | 'description' | 'price' | 'type' | 'digitalProd' | 'minWeight' | 'maxWeight' | 'minPrice' | 'maxPrice', string>>;

  /** The form as the API's body: countries split on commas and spaces, blank bounds null (cleared). */
  const zoneBody = (f: ZoneFormValues): ZoneBody => {
    const bound = (v: string | undefined) => (v && v.trim() ? v.trim() : null);
    return {
      name: f.name ?? '',
      countries: (f.countries ?? '').split(/[\s,]+/).filter(Boolean),
      description: f.description ?? '',
      ...(f.price && f.price.trim() ? { price: f.price.trim() } : {}),
      type: (f.type ?? 'Simple') as ZoneBody['type'],
      digitalProd: f.digitalProd === 'on',
      minWeight: bound(f.minWeight), maxWeight: bound(f.maxWeight), minPrice: bound(f.minPrice), maxPrice: bound(f.maxPrice),
    };
  };
  const zoneValues = (z: ZoneView): ZoneFormValues => ({
    name: z.shippingName, countries: z.zone.join(', '), description: z.description, price: z.price, type: z.type, digitalProd: z.digitalProd ? 'on' : '',
    minWeight: z.minWeight === null ? '' : String(z.minWeight), maxWeight: z.maxWeight === null ? '' : String(z.maxWeight),
    minPrice: z.minPrice === null ? '' : String(z.minPrice), maxPrice: z.maxPrice === null ? '' : String(z.maxPrice),
  });
  const NEW_ZONE: ZoneFormValues = { name: '', countries: '', description: '', price: '0.00', type: 'Simple', digitalProd: 'on' };

  const zoneForm = (request: FastifyRequest, reply: FastifyReply, zone: ZoneView | null, values: ZoneFormValues, errors: Record<string, string>, status = 200) =>
    page(deps, request, reply, 'store-zone', {
      title: zone ? `Edit ${zone.shippingName}` : 'New shipping zone', zone, values, errors, types: ZONE_TYPES,
    }, status);

  app.get('/store/shipping-zones', { config: merchant, schema: { querystring: pagedQuery({ deleted: text, saved: text }) } }, async (request, reply) => {
    const paging = parsePage(request.query, { limit: 25 });
    const { zones, total } = await listZones(deps, storeOf(request), paging);
    const notice = request.query.deleted ? 'Shipping zone deleted.' : request.query.saved ? 'Shipping zone saved.' : null;
    return page(deps, request, reply, 'store-zones', { title: 'Shipping zones', zones, notice, paged: { page: paging.page, limit: paging.limit, total } });
  });

  app.get('/store/shipping-zones/new', { config: merchant }, async (request, reply) => zoneForm(request, reply, null, NEW_ZONE, {}));

  app.post('/store/shipping-zones', { config: merchant, schema: { body: ZoneForm } }, async (request, reply) => {
    try {
      await createZone(deps, storeOf(request), zoneBody(request.body));
    } catch (err) {
      return zoneForm(request, reply, null, request.body, errorsByField(formRefusal(err, reply, ['bad_request'])), 400);
    }
    return reply.redirect('/dashboard/store/shipping-zones?saved=1', 303);
  });

  app.get('/store/shipping-zones/:zoneId', { config: merchant, schema: { params: ZoneParams } }, async (request, reply) => {
    const zone = await getZone(deps, storeOf(request), request.params.zoneId);
    return zoneForm(request, reply, zone, zoneValues(zone), {});
  });

  app.post('/store/shipping-zones/:zoneId', { config: merchant, schema: { params: ZoneParams, body: ZoneForm } }, async (request, reply) => {
    const storeId = storeOf(request);
    try {
      await updateZone(deps, storeId, request.params.zoneId, zoneBody(request.body));
    } catch (err) {
      const errors = errorsByField(formRefusal(err, reply, ['bad_request']));
      const zone = await getZone(deps, storeId, request.params.zoneId);
      return zoneForm(request, reply, zone, request.body, errors, 400);
    }
    return reply.redirect('/dashboard/store/shipping-zones?saved=1', 303);
  });

  app.get('/store/shipping-zones/:zoneId/delete', { config: merchant, schema: { params: ZoneParams } }, async (request, reply) => {
    const zone = await getZone(deps, storeOf(request), request.params.zoneId);
    return page(deps, request, reply, 'store-zone-delete', { title: `Delete ${zone.shippingName}`, zone });
  });

  app.post('/store/shipping-zones/:zoneId/delete', { config: merchant, schema: { params: ZoneParams, body: Csrf } }, async (request, reply) => {
    await deleteZone(deps, storeOf(request), request.params.zoneId);
    return reply.redirect('/dashboard/store/shipping-zones?deleted=1', 303);
  });
}
