// The OAuth routes (C4), in two surfaces (src/app.ts): the token endpoint is public, the app
// authenticating with its client id and secret in the body (oauth-client); installing, the
// installations and session tokens are the store's, with a merchant JWT (store-staff).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { assertCleanPart } from '../http/input-guard.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { callerStoreId } from '../http/user-auth.js';
import { authorize, exchangeToken, listInstallations, uninstall } from './oauth.service.js';
import { issueSessionToken } from './session-token.js';

const tags = ['oauth'];

/** OAuth clients often post form-encoded bodies; both surfaces accept that as well as JSON. */
function acceptFormBodies(app: FastifyInstance) {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const fields = Object.fromEntries(new URLSearchParams(body as string));
    try {
      assertCleanPart(fields, 'body'); // as JSON bodies are checked (src/http/input-guard.ts)
    } catch (err) {
      return done(err as Error);
    }
    done(null, fields);
  });
}

export async function oauthTokenRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  acceptFormBodies(app);

  app.post('/apps/oauth/token', {
    schema: {
      tags, summary: 'Exchange a code or refresh token (C4.4, C4.5)',
      body: Type.Object({
        client_id: Type.Optional(Type.String()), client_secret: Type.Optional(Type.String()), grant_type: Type.Optional(Type.String()),
        code: Type.Optional(Type.String()), state: Type.Optional(Type.String()), refresh_token: Type.Optional(Type.String()),
      }),
    },
  }, async (request) => envelope(await exchangeToken(deps, (request.body ?? {}) as Record<string, unknown>)));
}

/**
 * The merchant's side (merchant JWT, the store's staff): a JSON API. A browser's top-level
 * navigation carries no bearer token and gets 401 (C4.1); apps must never redirect merchants here.
 */
export async function oauthMerchantRoutes(merchant: FastifyInstance, { deps }: { deps: Deps }) {
  acceptFormBodies(merchant);

  merchant.get('/apps/oauth/authorize', {
    schema: { tags, summary: 'Start an install (C4.1)', querystring: Type.Object({ client_id: Type.Optional(Type.String()), scope: Type.Optional(Type.String()) }) },
  }, async (request) => envelope(await authorize(deps, callerStoreId(request), request.query as any)));

  merchant.get('/apps/installations', { schema: { tags, summary: "The store's installations" } }, async (request) => {
    const page = parsePage(request.query as Record<string, unknown>);
    const { installations, total } = await listInstallations(deps, callerStoreId(request), page);
    return envelopeList({ installations }, page, installations.length, total);
  });

  merchant.delete('/apps/installations/:installationId', {
    schema: { tags, summary: 'Uninstall (C4.7)', params: Type.Object({ installationId: Type.String() }) },
  }, async (request) => envelope(await uninstall(deps, callerStoreId(request), (request.params as any).installationId)));

  merchant.get('/apps/session-token', {
    schema: { tags, summary: 'Session token for an embedded app (C4.8)', querystring: Type.Object({ client_id: Type.Optional(Type.String()) }) },
  }, async (request) => envelope(await issueSessionToken(deps, callerStoreId(request), request.user!.id, (request.query as any).client_id)));
}
