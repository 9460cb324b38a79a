// App API content (app-api.md Endpoints): `POST /api/v1/pages.json` (write_content) and
// `GET /api/v1/menus.json` (read_content). Both answer envelopes, errors included (C5.1).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { apiCaller } from '../surfaces/app-api.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { createPage, PageSchema } from './pages.js';
import { listMenus, MenuSchema } from './menus.js';
import { pageBodySchema } from './content.schemas.js';

const tags = ['content'];

export async function contentApiRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const api = typed(instance);
  api.post('/pages.json', {
    config: { scope: 'write_content', shape: 'envelope' },
    schema: {
      tags, summary: 'Create a page: 201 envelope data.page (handle stays null when omitted)', body: pageBodySchema,
      response: { 201: envelopeOf(Type.Object({ page: PageSchema })) },
    },
  }, async (request, reply) => {
    const page = await createPage(deps, apiCaller(request).storeId, request.body);
    return reply.code(201).send(envelope({ page }, 201));
  });

  api.get('/menus.json', {
    config: { scope: 'read_content', shape: 'envelope' },
    schema: {
      tags, summary: "The store's menus, items nested in child; no paging",
      response: { 200: envelopeOf(Type.Object({ menus: Type.Array(MenuSchema) })) },
    },
  }, async (request) => envelope({ menus: await listMenus(deps.db, apiCaller(request).storeId) }));
}
