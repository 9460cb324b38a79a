// Apps (C3): a developer's app manifests and client credentials.
import { randomBytes } from 'node:crypto';
import type { Deps } from '../deps.js';
import { conflict, forbidden, notFound } from '../http/errors.js';
import { randomToken, uuidv7, isUuid } from '../ids.js';
import { slugify } from '../slug.js';
import { isUniqueViolation } from '../db/errors.js';
import type { PlatformUser } from '../accounts/jwt.js';
import { findApp, listDeveloperApps, lockAppExtensions, updateApp, type AppRow } from './apps.repo.js';
import { extensionsOf, MAX_APP_HANDLE_CHARS, mergeExtensions, readAppFields } from './app-input.js';
import { syncAppFunctions } from '../functions/functions.repo.js';

export function appView(deps: Deps, app: AppRow, options: { withSecret: boolean }) {
  return {
    appId: app.id,
    name: app.name,
    handle: app.handle,
    clientId: app.client_id,
    ...(options.withSecret ? { clientSecret: deps.secrets.open(app.client_secret_enc) } : {}),
    appUrl: app.app_url,
    redirectUrls: app.redirect_urls,
    scopes: app.scopes,
    tier: app.tier,
    gdprUrls: app.gdpr_urls,
    extensions: app.extensions,
    pricing: app.pricing,
    version: app.version,
    rating: Number(app.rating),
    reviewCount: app.review_count,
    createdAt: app.created_at.toISOString(),
    updatedAt: app.updated_at.toISOString(),
  };
}

export const newClientSecret = () => randomToken('svcsk', 32);

export async function createApp(deps: Deps, developer: PlatformUser, body: Record<string, unknown>) {
  const fields = await readAppFields(body, deps.config, true);
  // C14.9: the slug of the name; a name with nothing a slug can hold ("配送アプリ") takes `app-` and
  // six random hex digits, as a store's does (accounts.service.ts), rather than a 400.
  const base = fields.handle ?? (slugify(fields.name!) || `app-${randomBytes(3).toString('hex')}`);
  const extensions = extensionsOf(fields.extensions);
  const now = deps.clock.now();
  // A handle the developer gave must be free (409); a default one made from the name takes the
  // first free `name-N` instead (docs/decisions.md).
  for (let n = 1; ; n++) {
    const handle = numberedHandle(base, n);
    try {
      const rows = await deps.db.transaction(async (tx) => {
        const inserted = await tx.query<AppRow>(
        `INSERT INTO apps (id, developer_id, name, handle, client_id, client_secret_enc, app_url, redirect_urls, scopes, tier,
           gdpr_urls, extensions, pricing, version, created_at, updated_at)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$15) RETURNING *`,
        [
          uuidv7(), developer.id, fields.name, handle, randomToken('svcapp', 16), deps.secrets.seal(newClientSecret()), fields.appUrl,
          JSON.stringify(fields.redirectUrls ?? []), JSON.stringify(fields.scopes), fields.tier ?? 'free',
          fields.gdprUrls ? JSON.stringify(fields.gdprUrls) : null, JSON.stringify(extensions),
          JSON.stringify(fields.pricing ?? { type: 'free' }), fields.version ?? '1.0.0', now,
        ],
        );
        await syncAppFunctions(tx, inserted.rows[0].id, extensions.functions ?? [], now);
        return inserted.rows;
      });
      return { app: appView(deps, rows[0], { withSecret: true }) };
    } catch (err) {
      if (!isUniqueViolation(err, 'apps_handle_key')) throw err;
      if (fields.handle || n >= 50) throw conflict(`handle "${handle}" is already taken`);
    }
  }
}

/**
 * The n-th candidate for a default handle: the slug, then `slug-2`, `slug-3`... cut so that the
 * whole stays a handle the API takes back (at most MAX_APP_HANDLE_CHARS). A 60-character slug
 * with `-2` made a 62-character handle that every later PATCH or dashboard edit sending it refused.
 */
function numberedHandle(base: string, n: number): string {
  if (n === 1) return base;
  const suffix = `-${n}`;
  return `${base.slice(0, MAX_APP_HANDLE_CHARS - suffix.length).replace(/-+$/, '')}${suffix}`;
}

/** The app, if the caller owns it: another developer's app is 403, an unknown one 404 (C3.2). */
export async function ownedApp(deps: Deps, developer: PlatformUser, appId: string): Promise<AppRow> {
  const app = isUuid(appId) ? await findApp(deps.db, appId) : null;
  if (!app) throw notFound('App not found');
  if (app.developer_id !== developer.id) throw forbidden('You do not own this app');
  return app;
}

export async function listApps(deps: Deps, developer: PlatformUser, page: { limit: number; offset: number }) {
  const { rows, total } = await listDeveloperApps(deps.db, developer.id, page.limit, page.offset);
  return { apps: rows.map((a) => appView(deps, a, { withSecret: false })), total };
}

export async function patchApp(deps: Deps, developer: PlatformUser, appId: string, body: Record<string, unknown>) {
  await ownedApp(deps, developer, appId);
  const fields = await readAppFields(body, deps.config, false);
  const now = deps.clock.now();
  try {
    const { extensions: patch, ...rest } = fields;
    const app = await deps.db.transaction(async (tx) => {
      // `extensions` is merged by key (docs/decisions.md), on the row as it is now: locked, so
      // that two PATCHes naming different keys both keep theirs.
      const extensions = patch ? mergeExtensions(await lockAppExtensions(tx, appId), patch) : undefined;
      const updated = await updateApp(tx, appId, { ...rest, extensions }, now);
      // C11.1: the manifest's functions change on every store at once; only when the patch names
      // them (null: none), so a PATCH of another extension leaves them and their activations alone.
      if (patch && patch.functions !== undefined) await syncAppFunctions(tx, appId, patch.functions ?? [], now);
      if (fields.version) {
        // C3.3: auto-updating installations that are not pinned follow the new version.
        await tx.query(
          `UPDATE installations SET installed_version = $1, updated_at = $2
            WHERE app_id = $3 AND auto_update AND pinned_version IS NULL AND status <> 'uninstalled'`,
          [fields.version, now, appId],
        );
      }
      return updated;
    });
    return { app: appView(deps, app, { withSecret: true }) };
  } catch (err) {
    if (isUniqueViolation(err, 'apps_handle_key')) throw conflict(`handle "${fields.handle}" is already taken`);
    throw err;
  }
}

/** The old secret stops working at once: every check reads the stored secret (C3.2, C8.7). */
export async function rotateSecret(deps: Deps, developer: PlatformUser, appId: string) {
  await ownedApp(deps, developer, appId);
  const secret = newClientSecret();
  const app = await updateApp(deps.db, appId, { clientSecretEnc: deps.secrets.seal(secret) }, deps.clock.now());
  return { app: appView(deps, app, { withSecret: true }), clientSecret: secret };
}
