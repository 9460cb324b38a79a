import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { appView, createApp, listApps, ownedApp, patchApp, rotateSecret } from './apps.service.js';

const appId = Type.Object({ appId: Type.String() });
const tags = ['apps'];

/** `/apps/developer/apps...`, registered in the developer surface (src/surfaces/developer.ts). */
export async function appRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  app.post('/apps/developer/apps', { schema: { tags, summary: 'Create an app (C3.1)', body: Type.Object({}, { additionalProperties: true }) } },
    async (request, reply) => reply.code(201).send(envelope(await createApp(deps, request.user!, request.body as any), 201)));

  app.get('/apps/developer/apps', { schema: { tags, summary: "The caller's apps (C3.2)" } }, async (request) => {
    const page = parsePage(request.query as Record<string, unknown>);
    const { apps, total } = await listApps(deps, request.user!, page);
    return envelopeList({ apps }, page, apps.length, total);
  });

  app.get('/apps/developer/apps/:appId', { schema: { tags, params: appId, summary: 'One app, with its client secret' } }, async (request) => {
    const row = await ownedApp(deps, request.user!, (request.params as any).appId);
    return envelope({ app: appView(deps, row, { withSecret: true }) });
  });

  app.patch('/apps/developer/apps/:appId', { schema: { tags, params: appId, summary: 'Update an app (C3.2, C3.3)' } },
    async (request) => envelope(await patchApp(deps, request.user!, (request.params as any).appId, (request.body ?? {}) as any)));

  app.post('/apps/developer/apps/:appId/rotate-secret', { schema: { tags, params: appId, summary: 'Rotate the client secret' } },
    async (request) => envelope(await rotateSecret(deps, request.user!, (request.params as any).appId)));
}
