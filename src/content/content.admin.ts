// Merchant admin content entry (C7.1): `POST /pages` and `POST /menus` (items nested in `child`,
// C14.5). 201 envelopes whose `data` is the resource in its App API shape.
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { adminStoreId } from '../surfaces/merchant-admin.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { createPage, PageSchema } from './pages.js';
import { createMenu, MenuSchema } from './menus.js';
import { menuBodySchema, pageBodySchema } from './content.schemas.js';

const tags = ['merchant admin'];

export async function contentAdminRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const admin = typed(instance);
  admin.post('/pages', {
    schema: { tags, summary: 'Create a page (C7.1)', body: pageBodySchema, response: { 201: envelopeOf(PageSchema) } },
  }, async (request, reply) => reply.code(201).send(envelope(await createPage(deps, adminStoreId(request), request.body), 201)));

  admin.post('/menus', {
    schema: { tags, summary: 'Create a menu with its nested items (C7.1, C14.5)', body: menuBodySchema, response: { 201: envelopeOf(MenuSchema) } },
  }, async (request, reply) => reply.code(201).send(envelope(await createMenu(deps, adminStoreId(request), request.body), 201)));
}
