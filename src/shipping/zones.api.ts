// App API shipping zones (app-api.md `POST /api/v1/shipping_zones.json`; C6.10 list, get, update,
// delete; C14.8 list key). Envelopes throughout, errors included (C5.1). Tokens are bound to one
// store, so another store's zone is not found (404), like an unknown one.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { envelopeListOf, envelopeOf, PagingQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { createZone, deleteZone, getZone, listZones, updateZone, zoneBodySchema, ZoneSchema } from './zones.js';

const tags = ['shipping'];
const params = Type.Object({ id: Type.String({ description: 'shippingZoneId (UUID); another value is not found' }) });
const zoneEnvelope = envelopeOf(Type.Object({ shipping_zone: ZoneSchema }));

export async function shippingApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  const read = { scope: 'read_shipping', shape: 'envelope' } as const;
  const write = { scope: 'write_shipping', shape: 'envelope' } as const;

  api.post('/shipping_zones.json', {
    config: write,
    schema: { tags, summary: 'Create a shipping zone: 201 envelope data.shipping_zone', body: zoneBodySchema(true), response: { 201: zoneEnvelope } },
  }, async (request, reply) => {
    const zone = await createZone(deps, apiCaller(request).storeId, request.body);
    return reply.code(201).send(envelope({ shipping_zone: zone }, 201));
  });

  api.get('/shipping_zones.json', {
    config: read,
    schema: {
      tags, summary: 'Shipping zones, newest first: envelope data.shipping_zones with pagination (C6.10, C14.8)',
      querystring: PagingQuery,
      response: { 200: envelopeListOf(Type.Object({ shipping_zones: Type.Array(ZoneSchema) })) },
    },
  }, async (request) => {
    const page = parsePage(request.query);
    const { zones, total } = await listZones(deps, apiCaller(request).storeId, page);
    return envelopeList({ shipping_zones: zones }, page, zones.length, total);
  });

  api.get('/shipping_zones/:id.json', {
    config: read,
    schema: { tags, params, summary: 'One shipping zone (C6.10)', response: { 200: zoneEnvelope } },
  }, async (request) => envelope({ shipping_zone: await getZone(deps, apiCaller(request).storeId, request.params.id) }));

  api.put('/shipping_zones/:id.json', {
    config: write,
    schema: { tags, params, summary: 'Update a shipping zone: the fields sent (C6.10)', body: zoneBodySchema(false), response: { 200: zoneEnvelope } },
  }, async (request) => {
    const zone = await updateZone(deps, apiCaller(request).storeId, request.params.id, request.body);
    return envelope({ shipping_zone: zone });
  });

  api.delete('/shipping_zones/:id.json', {
    config: write,
    schema: { tags, params, summary: 'Delete a shipping zone: 200 envelope, data null (C6.10)', response: { 200: envelopeOf(Type.Null()) } },
  }, async (request) => {
    await deleteZone(deps, apiCaller(request).storeId, request.params.id);
    return envelope(null);
  });
}
