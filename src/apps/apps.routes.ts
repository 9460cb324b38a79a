import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { envelopeListOf, envelopeOf, Id, nullable, PagingQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { AppSchema, appBodySchema } from './app-schemas.js';
import { appView, createApp, listApps, ownedApp, patchApp, rotateSecret } from './apps.service.js';
import { noStore } from '../surfaces/no-store.js';

const params = Type.Object({ appId: Id('appId (UUID); another value is not found') });
const tags = ['apps'];
const appEnvelope = envelopeOf(Type.Object({ app: AppSchema }));
const handleTaken = { errors: { 409: 'The handle is already taken' } };

/** `/apps/developer/apps...`, registered in the developer surface (src/surfaces/developer.ts). */
export async function appRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  noStore(instance); // client secrets
  const app = typed(instance);
  app.post('/apps/developer/apps', {
    config: handleTaken,
    schema: { tags, summary: 'Create an app (C3.1): 201 envelope data.app, with its client secret', body: appBodySchema(true), response: { 201: appEnvelope } },
  }, async (request, reply) => reply.code(201).send(envelope(await createApp(deps, request.user!, request.body), 201)));

  app.get('/apps/developer/apps', {
    schema: {
      tags, summary: "The caller's apps (C3.2), without client secrets", querystring: PagingQuery,
      response: { 200: envelopeListOf(Type.Object({ apps: Type.Array(AppSchema) })) },
    },
  }, async (request) => {
    const page = parsePage(request.query);
    const { apps, total } = await listApps(deps, request.user!, page);
    return envelopeList({ apps }, page, apps.length, total);
  });

  app.get('/apps/developer/apps/:appId', {
    schema: { tags, params, summary: 'One app, with its client secret', response: { 200: appEnvelope } },
  }, async (request) => {
    const row = await ownedApp(deps, request.user!, request.params.appId);
    return envelope({ app: appView(deps, row, { withSecret: true }) });
  });

  app.patch('/apps/developer/apps/:appId', {
    config: handleTaken,
    schema: { tags, params, summary: 'Update an app: the fields sent (C3.2, C3.3); `extensions` merged by key, a key given as null removed', body: nullable(appBodySchema(false)), response: { 200: appEnvelope } },
  }, async (request) => envelope(await patchApp(deps, request.user!, request.params.appId, request.body ?? {})));

  app.post('/apps/developer/apps/:appId/rotate-secret', {
    schema: {
      tags, params, summary: 'Rotate the client secret; the old one stops working at once',
      response: { 200: envelopeOf(Type.Object({ app: AppSchema, clientSecret: Type.String({ description: 'the new client secret' }) })) },
    },
  }, async (request) => envelope(await rotateSecret(deps, request.user!, request.params.appId)));
}
