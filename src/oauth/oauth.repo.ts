// OAuth's SQL (C4): authorization codes, grants and the tokens issued within them. Secrets are
// stored only as SHA-256 hashes; the callers hash (oauth.service.ts). Installations are
// installations.repo.ts.
import type { Queryable } from '../db/db.js';
import { insertRow } from '../db/sql.js';
import type { AppRow } from '../apps/apps.repo.js';

const SCOPES = { scopes: 'jsonb' };

export async function insertCode(
  q: Queryable,
  row: { code_hash: string; installation_id: string; state: string; scopes: string[]; expires_at: Date; created_at: Date },
): Promise<void> {
  await insertRow(q, 'oauth_codes', { ...row }, { casts: SCOPES });
}

export interface CodeRow {
  installation_id: string;
  state: string;
  scopes: string[];
  expires_at: Date;
  used_at: Date | null;
  grant_id: string | null;
  /** The app of the code's installation. */
  app_id: string;
}

/** The installation a code was issued for (not locked: the caller locks the installation first). */
export async function codeInstallation(q: Queryable, codeHash: string): Promise<string | null> {
  const { rows } = await q.query<{ installation_id: string }>('SELECT installation_id FROM oauth_codes WHERE code_hash = $1', [codeHash]);
  return rows[0]?.installation_id ?? null;
}

/**
 * The app as it is now, share-locked until the transaction ends: a code exchange activates the
 * installation with this row, not with the copy read to authenticate the client. A version PATCH
 * holds the app's row from its UPDATE until it commits, and then moves the installations (C3.3);
 * the exchange waits here, before it locks the installation (the PATCH's order: app, then
 * installation, so the two never deadlock), and then reads the version the PATCH committed.
 */
export async function shareLockApp(q: Queryable, appId: string): Promise<AppRow | null> {
  const { rows } = await q.query<AppRow>('SELECT * FROM apps WHERE id = $1 FOR SHARE', [appId]);
  return rows[0] ?? null;
}

/** The code with its installation's app, locked: a code is exchanged once. */
export async function lockCode(q: Queryable, codeHash: string): Promise<CodeRow | null> {
  const { rows } = await q.query<CodeRow>(
    `SELECT c.*, i.app_id FROM oauth_codes c JOIN installations i ON i.id = c.installation_id WHERE c.code_hash = $1 FOR UPDATE OF c`,
    [codeHash],
  );
  return rows[0] ?? null;
}

export async function markCodeUsed(q: Queryable, codeHash: string, grantId: string, now: Date): Promise<void> {
  await q.query('UPDATE oauth_codes SET used_at = $2, grant_id = $3 WHERE code_hash = $1', [codeHash, now, grantId]);
}

/** Codes of the installation handed off but not exchanged expire now (uninstall, C4.7). */
export async function expireUnusedCodes(q: Queryable, installationId: string, now: Date): Promise<void> {
  await q.query('UPDATE oauth_codes SET expires_at = $2 WHERE installation_id = $1 AND used_at IS NULL AND expires_at > $2', [installationId, now]);
}

/**
 * C4.6: a token opens its installation's scopes only. When the merchant authorises the app again
 * with fewer scopes, the installation's earlier grants (kept alive, docs/decisions.md) lose the
 * scopes the merchant took away, so their access tokens and refreshes stop carrying them. Returns
 * how many grants changed.
 */
export async function narrowEarlierGrants(q: Queryable, installationId: string, keepGrantId: string, scopes: string[]): Promise<number> {
  const { rows } = await q.query(
    `UPDATE oauth_grants g
        SET scopes = COALESCE((SELECT jsonb_agg(t.s ORDER BY t.n) FROM jsonb_array_elements_text(g.scopes) WITH ORDINALITY AS t(s, n)
                                WHERE t.s = ANY($3::text[])), '[]'::jsonb)
      WHERE g.installation_id = $1 AND g.id <> $2 AND g.revoked_at IS NULL AND NOT (g.scopes <@ $4::jsonb)
      RETURNING g.id`,
    [installationId, keepGrantId, scopes, JSON.stringify(scopes)],
  );
  return rows.length;
}

/** Whether the installation had a grant before `grantId`: it was active once (every activation is a code exchange, which makes one). */
export async function hasEarlierGrant(q: Queryable, installationId: string, grantId: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM oauth_grants WHERE installation_id = $1 AND id <> $2 LIMIT 1', [installationId, grantId]);
  return rows.length > 0;
}

export async function insertGrant(q: Queryable, row: { id: string; installation_id: string; scopes: string[]; created_at: Date; expires_at: Date }): Promise<void> {
  await insertRow(q, 'oauth_grants', { ...row }, { casts: SCOPES });
}

/** An access or refresh token of a grant (by hash). */
export interface NewToken {
  token_hash: string;
  grant_id: string;
  installation_id: string;
  expires_at: Date;
  created_at: Date;
}

export async function insertAccessToken(q: Queryable, row: NewToken): Promise<void> {
  await insertRow(q, 'access_tokens', { ...row });
}

export async function insertRefreshToken(q: Queryable, row: NewToken): Promise<void> {
  await insertRow(q, 'refresh_tokens', { ...row });
}

export interface RefreshTokenRow {
  grant_id: string;
  installation_id: string;
  expires_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
  app_id: string;
  /** The installation's status. */
  status: string;
  grant_revoked: Date | null;
  grant_expires: Date;
  /** The grant's scopes. */
  scopes: string[];
}

/** The refresh token with its installation and grant, locked: a refresh token rotates once. */
/** The installation a refresh token belongs to, unlocked: its lock is taken first (oauth.service.ts `refresh`). */
export async function refreshTokenInstallation(q: Queryable, hash: string): Promise<string | null> {
  const { rows } = await q.query<{ installation_id: string }>('SELECT installation_id FROM refresh_tokens WHERE token_hash = $1', [hash]);
  return rows[0]?.installation_id ?? null;
}

export async function lockRefreshToken(q: Queryable, hash: string): Promise<RefreshTokenRow | null> {
  const { rows } = await q.query<RefreshTokenRow>(
    `SELECT r.grant_id, r.installation_id, r.expires_at, r.rotated_at, r.revoked_at, i.app_id, i.status,
            g.revoked_at AS grant_revoked, g.expires_at AS grant_expires, g.scopes
       FROM refresh_tokens r JOIN installations i ON i.id = r.installation_id JOIN oauth_grants g ON g.id = r.grant_id
      WHERE r.token_hash = $1 FOR UPDATE OF r`,
    [hash],
  );
  return rows[0] ?? null;
}

export async function markRotated(q: Queryable, hash: string, now: Date): Promise<void> {
  await q.query('UPDATE refresh_tokens SET rotated_at = $2 WHERE token_hash = $1', [hash, now]);
}
