// Installations' SQL: an app on a store (C4), and the revocation of its grants and tokens.
import type { Queryable } from '../db/db.js';
import { insertRow } from '../db/sql.js';

export interface InstallationRow {
  id: string;
  app_id: string;
  store_id: string;
  status: 'pending' | 'active' | 'pending_uninstall' | 'uninstalled';
  scopes: string[];
  billing_status: 'none' | 'trialing' | 'active' | 'past_due';
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

/**
 * The installation, locked against another install or uninstall until the transaction ends. Code
 * exchange and uninstall both take this lock first, so that one sees all the other did: without
 * it an exchange racing an uninstall could issue tokens the uninstall never revoked (they came back
 * on reinstall), or activate the installation the uninstall had just ended. `NO KEY UPDATE`: the
 * rows that refer to the installation (tokens, grants) may still be inserted meanwhile.
 */
export const lockInstallation = async (q: Queryable, id: string) =>
  (await q.query<InstallationRow>('SELECT * FROM installations WHERE id = $1 FOR NO KEY UPDATE', [id])).rows[0] ?? null;

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

/** A pending installation of the app on the store, unless one exists already (any status). */
export async function insertPendingInstallation(
  q: Queryable,
  row: { id: string; app_id: string; store_id: string; scopes: string[]; installed_version: string; now: Date },
): Promise<void> {
  const { now, ...rest } = row;
  await insertRow(q, 'installations', { ...rest, status: 'pending', created_at: now, updated_at: now }, {
    casts: { scopes: 'jsonb' },
    onConflict: 'ON CONFLICT (app_id, store_id) DO NOTHING',
  });
}

/**
 * The installation becomes active with `scopes`. `version` is recorded when it was not active
 * before (`becomingActive`); `billing` sets the billing status and dates (C10.1), null keeps them.
 */
export async function activateInstallationRow(
  q: Queryable,
  id: string,
  a: { scopes: string[]; becomingActive: boolean; version: string; billing: { billingStatus: string; trialEndsAt: Date | null; billingStartDate: Date | null } | null; now: Date },
): Promise<void> {
  await q.query(
    `UPDATE installations SET status = 'active', scopes = $2, uninstalled_at = NULL, updated_at = $3,
       installed_version = CASE WHEN $4 THEN $5 ELSE installed_version END,
       billing_status = COALESCE($6, billing_status),
       trial_ends_at = CASE WHEN $9 THEN $7::timestamptz ELSE trial_ends_at END,
       billing_start_date = CASE WHEN $9 THEN $8::timestamptz ELSE billing_start_date END
     WHERE id = $1`,
    [id, JSON.stringify(a.scopes), a.now, a.becomingActive, a.version, a.billing?.billingStatus ?? null,
      a.billing?.trialEndsAt ?? null, a.billing?.billingStartDate ?? null, a.billing !== null],
  );
}

/** Uninstalled (or pending_uninstall while a paid period runs) as of `now`. */
export async function markUninstalled(q: Queryable, id: string, status: 'uninstalled' | 'pending_uninstall', now: Date): Promise<InstallationRow> {
  const { rows } = await q.query<InstallationRow>(
    `UPDATE installations SET status = $3, uninstalled_at = $2, updated_at = $2 WHERE id = $1 RETURNING *`,
    [id, now, status],
  );
  return rows[0];
}

/** The store's installations, newest first, with their apps' names and handles; and the total. */
export async function listStoreInstallations(q: Queryable, storeId: string, page: { limit: number; offset: number }) {
  const [{ rows }, total] = await Promise.all([
    q.query<InstallationRow & { app_name: string; app_handle: string }>(
      `SELECT i.*, a.name AS app_name, a.handle AS app_handle FROM installations i JOIN apps a ON a.id = i.app_id
        WHERE i.store_id = $1 ORDER BY i.created_at DESC, i.id DESC LIMIT $2 OFFSET $3`,
      [storeId, page.limit, page.offset],
    ),
    q.query<{ n: number }>('SELECT count(*)::int AS n FROM installations WHERE store_id = $1', [storeId]),
  ]);
  return { rows, total: total.rows[0].n };
}
