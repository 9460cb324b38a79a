import type { Queryable } from '../db/db.js';
import { updateRow } from '../db/sql.js';
import type { AppFields, Extensions } from './app-input.js';

export interface AppRow {
  id: string;
  developer_id: string;
  name: string;
  handle: string;
  client_id: string;
  client_secret_enc: string;
  app_url: string;
  redirect_urls: string[];
  scopes: string[];
  tier: 'free' | 'basic' | 'pro' | 'enterprise';
  gdpr_urls: NonNullable<AppFields['gdprUrls']> | null;
  extensions: Extensions;
  pricing: NonNullable<AppFields['pricing']>;
  version: string;
  rating: string;
  review_count: number;
  created_at: Date;
  updated_at: Date;
}

export const findApp = async (q: Queryable, id: string) =>
  (await q.query<AppRow>('SELECT * FROM apps WHERE id = $1', [id])).rows[0] ?? null;

export const findAppByClientId = async (q: Queryable, clientId: string) =>
  (await q.query<AppRow>('SELECT * FROM apps WHERE client_id = $1', [clientId])).rows[0] ?? null;

/** The app's manifest extensions (e.g. `salesChannel`), or null. */
export const appExtensions = async (q: Queryable, id: string) =>
  (await q.query<{ extensions: AppRow['extensions'] }>('SELECT extensions FROM apps WHERE id = $1', [id])).rows[0]?.extensions ?? null;

/** The app's extensions, its row locked until the transaction ends (a PATCH merges into them). */
export const lockAppExtensions = async (q: Queryable, id: string): Promise<Extensions> =>
  (await q.query<{ extensions: Extensions }>('SELECT extensions FROM apps WHERE id = $1 FOR UPDATE', [id])).rows[0]?.extensions ?? {};

export const listDeveloperApps = async (q: Queryable, developerId: string, limit: number, offset: number) => {
  const [rows, total] = await Promise.all([
    q.query<AppRow>('SELECT * FROM apps WHERE developer_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3', [developerId, limit, offset]),
    q.query<{ n: number }>('SELECT count(*)::int AS n FROM apps WHERE developer_id = $1', [developerId]),
  ]);
  return { rows: rows.rows, total: total.rows[0].n };
};

const COLUMN_OF: Record<string, string> = {
  name: 'name', handle: 'handle', appUrl: 'app_url', redirectUrls: 'redirect_urls', scopes: 'scopes', tier: 'tier',
  gdprUrls: 'gdpr_urls', extensions: 'extensions', pricing: 'pricing', version: 'version', clientSecretEnc: 'client_secret_enc',
};
const JSON_CASTS = { redirect_urls: 'jsonb', scopes: 'jsonb', gdpr_urls: 'jsonb', extensions: 'jsonb', pricing: 'jsonb' };

export async function updateApp(q: Queryable, id: string, fields: Record<string, unknown>, now: Date): Promise<AppRow> {
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (COLUMN_OF[key]) changes[COLUMN_OF[key]] = value;
  const { rows } = await updateRow<AppRow>(q, 'apps', { id }, { ...changes, updated_at: now }, { casts: JSON_CASTS, returning: '*' });
  return rows[0];
}
