// Merchant admin content entry (C7.1): `POST /pages` and `POST /menus` (items nested in `child`,
// C14.5), 201 envelopes whose `data` is the resource in its App API shape; and `DELETE /menus/{id}`
// (not in the spec: a store's menus are bounded, docs/decisions.md Content), the menu as it was.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { adminStoreId, assertStoreAccess } from '../surfaces/merchant-admin.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { createPage, PageSchema } from './pages.js';
import { createMenu, deleteMenu, MenuSchema } from './menus.js';
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

  admin.delete('/menus/:id', {
    schema: {
      tags, summary: 'Delete a menu with its items; `data` is the menu as it was', response: { 200: envelopeOf(MenuSchema) },
      params: Type.Object({ id: Type.String({ description: "the menu id (menuId, a UUID); an item's id or another value is not found" }) }),
    },
  }, async (request) => envelope(await deleteMenu(deps, request.params.id, (storeId) => assertStoreAccess(request, storeId))));
}
