// The OAuth routes (C4), in two surfaces (src/app.ts): the token endpoint is public, the app
// authenticating with its client id and secret in the body (oauth-client); installing, the
// installations and session tokens are the store's, with a merchant JWT (store-staff).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { assertCleanPart } from '../http/input-guard.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { envelopeListOf, envelopeOf, Id, PagingQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { callerStoreId } from '../http/user-auth.js';
import { InstallationSchema } from './installation-schema.js';
import { authorize, exchangeToken, listInstallations, uninstall } from './oauth.service.js';
import { issueSessionToken } from './session-token.js';
import { noStore } from '../surfaces/no-store.js';

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

// Every field is optional to the schema: the client is authenticated first (401), and only then
// are the grant's own fields checked (400), in C4.4's order (oauth.service.ts).
const TokenBody = Type.Object({
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String()),
  grant_type: Type.Optional(Type.String({ description: 'authorization_code or refresh_token' })),
  code: Type.Optional(Type.String({ description: 'authorization_code: the code of the handoff (C4.3)' })),
  state: Type.Optional(Type.String({ description: 'authorization_code: the state of the handoff' })),
  refresh_token: Type.Optional(Type.String({ description: 'refresh_token: the refresh token, used once (C4.5)' })),
});

const Tokens = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String({ description: 'single use: a refresh returns a new one, and reusing an old one revokes the installation (C4.5)' }),
  expires_in: Type.Integer({ description: 'seconds the access token lives (24 hours)' }),
  refresh_token_expires_in: Type.Integer({ description: 'seconds left of the 30-day grant' }),
  scope: Type.String({ description: 'the scopes granted, comma-separated' }),
  token_type: Type.Literal('Bearer'),
});

export async function oauthTokenRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  acceptFormBodies(instance);
  noStore(instance); // tokens (RFC 6749 5.1)
  const app = typed(instance);

  app.post('/apps/oauth/token', {
    config: { errors: { 401: 'Unknown client or wrong client secret' } },
    schema: {
      tags, summary: 'Exchange a code or refresh token (C4.4, C4.5); JSON or form-encoded',
      body: TokenBody,
      response: { 200: envelopeOf(Tokens) },
    },
  }, async (request) => envelope(await exchangeToken(deps, request.body)));
}

/**
 * The merchant's side (merchant JWT, the store's staff): a JSON API. A browser's top-level
 * navigation carries no bearer token and gets 401 (C4.1); apps must never redirect merchants here.
 */
export async function oauthMerchantRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  acceptFormBodies(instance);
  noStore(instance); // an authorization code in the handoff URL, session tokens
  const merchant = typed(instance);

  merchant.get('/apps/oauth/authorize', {
    // It writes (a pending installation, an authorization code): a HEAD must not run it, so none
    // is derived from this GET; HEAD gets the 404 of any unknown route (test/http-edge-requests.test.ts).
    exposeHeadRoute: false,
    schema: {
      tags, summary: 'Start an install (C4.1): the URL to send the browser to',
      querystring: Type.Object({
        client_id: Type.Optional(Type.String({ description: "the app's client id (required)" })),
        scope: Type.Optional(Type.String({ description: "comma-separated, a subset of the app's scopes (default: all of them)" })),
      }),
      response: { 200: envelopeOf(Type.Object({ redirectUrl: Type.String({ description: "the app's URL with the signed handoff (C4.2)" }), installationId: Id() })) },
    },
  }, async (request) => envelope(await authorize(deps, callerStoreId(request), request.query)));

  merchant.get('/apps/installations', {
    schema: {
      tags, summary: "The store's installations", querystring: PagingQuery,
      response: { 200: envelopeListOf(Type.Object({ installations: Type.Array(InstallationSchema) })) },
    },
  }, async (request) => {
    const page = parsePage(request.query);
    const { installations, total } = await listInstallations(deps, callerStoreId(request), page);
    return envelopeList({ installations }, page, installations.length, total);
  });

  merchant.delete('/apps/installations/:installationId', {
    schema: {
      tags, summary: 'Uninstall (C4.7): the installation as it is now',
      params: Type.Object({ installationId: Id('installationId (UUID); another value is not found') }),
      response: { 200: envelopeOf(InstallationSchema) },
    },
  }, async (request) => envelope(await uninstall(deps, callerStoreId(request), request.params.installationId)));

  merchant.get('/apps/session-token', {
    config: { errors: { 404: 'The app is not installed on this store (C4.8)' } },
    schema: {
      tags, summary: 'Session token for an embedded app (C4.8)',
      querystring: Type.Object({ client_id: Type.Optional(Type.String({ description: "the app's client id (required)" })) }),
      response: { 200: envelopeOf(Type.Object({ sessionToken: Type.String({ description: "an HS256 JWT signed with the app's client secret, for 60 seconds" }) })) },
    },
  }, async (request) => envelope(await issueSessionToken(deps, callerStoreId(request), request.user!.id, request.query.client_id)));
}
