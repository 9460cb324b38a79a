import type { Queryable } from '../db/db.js';

export interface InstallationRow {
  id: string;
  app_id: string;
  store_id: string;
  status: 'pending' | 'active' | 'pending_uninstall' | 'uninstalled';
  scopes: string[];
  billing_status: string;
  installed_version: string;
  auto_update: boolean;
  pinned_version: string | null;
  billing_start_date: Date | null;
  trial_ends_at: Date | null;
  uninstalled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const findInstallation = async (q: Queryable, id: string) =>
  (await q.query<InstallationRow>('SELECT * FROM installations WHERE id = $1', [id])).rows[0] ?? null;

export const findInstallationOf = async (q: Queryable, appId: string, storeId: string) =>
  (await q.query<InstallationRow>('SELECT * FROM installations WHERE app_id = $1 AND store_id = $2', [appId, storeId])).rows[0] ?? null;

/** Revoke every grant and token of an installation (uninstall, reuse detection). */
export async function revokeInstallationTokens(q: Queryable, installationId: string, now: Date) {
  await q.query('UPDATE oauth_grants SET revoked_at = $2 WHERE installation_id = $1 AND revoked_at IS NULL', [installationId, now]);
  await q.query('UPDATE access_tokens SET revoked_at = $2 WHERE installation_id = $1 AND revoked_at IS NULL', [installationId, now]);
  await q.query('UPDATE refresh_tokens SET revoked_at = $2 WHERE installation_id = $1 AND revoked_at IS NULL', [installationId, now]);
}

/** Revoke one grant and its tokens (a code presented twice, C4.4). */
export async function revokeGrant(q: Queryable, grantId: string, now: Date) {
  await q.query('UPDATE oauth_grants SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [grantId, now]);
  await q.query('UPDATE access_tokens SET revoked_at = $2 WHERE grant_id = $1 AND revoked_at IS NULL', [grantId, now]);
  await q.query('UPDATE refresh_tokens SET revoked_at = $2 WHERE grant_id = $1 AND revoked_at IS NULL', [grantId, now]);
}
