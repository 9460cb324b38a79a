// Session tokens (C4.8, app-api.md Session tokens): what an embedded app's frontend sends to the
// app's own backend. HS256 with the app's client secret; aud = client id, iss = {site_url}.
import { SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../deps.js';
import { badRequest, notFound } from '../http/errors.js';
import { findAppByClientId } from '../apps/apps.repo.js';
import { findStore } from '../accounts/accounts.repo.js';
import { findInstallationOf } from './installations.repo.js';
import { sha256Hex } from '../crypto.js';

export const SESSION_TOKEN_TTL_S = 60;

export async function issueSessionToken(deps: Deps, storeId: string, userId: string, clientId: string | undefined) {
  if (!clientId) throw badRequest('client_id is required');
  const app = await findAppByClientId(deps.db, clientId);
  const installation = app ? await findInstallationOf(deps.db, app.id, storeId) : null;
  if (!app || installation?.status !== 'active') throw notFound('App is not installed on this store');
  const store = (await findStore(deps.db, storeId))!;
  const iat = Math.floor(deps.clock.nowMs() / 1000);
  const sessionToken = await new SignJWT({ dest: store.slug, sid: sha256Hex(`${userId}:${installation.id}`).slice(0, 32) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(deps.config.siteUrl)
    .setAudience(app.client_id)
    .setSubject(store.id)
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(iat + SESSION_TOKEN_TTL_S)
    .setJti(randomUUID())
    .sign(new TextEncoder().encode(deps.secrets.open(app.client_secret_enc)));
  return { sessionToken };
}
