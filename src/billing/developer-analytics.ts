// Developer analytics and an app's installations (app-api.md "Developer resources", C14.12).
import type { Deps } from '../deps.js';
import type { PlatformUser } from '../accounts/jwt.js';
import type { Page } from '../http/paging.js';
import { formatMinor } from '../money.js';
import { ownedApp } from '../apps/apps.service.js';
import type { InstallationRow } from '../oauth/installations.repo.js';
import { installationView } from '../oauth/oauth.service.js';

/** `GET /apps/developer/analytics`: every app of the developer, no time series. */
export async function developerAnalytics(deps: Deps, developerId: string) {
  const [apps, totals] = await Promise.all([
    deps.db.query<{ id: string; name: string; rating: string; review_count: number; install_count: number }>(
      `SELECT a.id, a.name, a.rating, a.review_count,
              (SELECT count(*) FROM installations i WHERE i.app_id = a.id AND i.status = 'active')::int AS install_count
         FROM apps a WHERE a.developer_id = $1 ORDER BY a.created_at DESC, a.id DESC`,
      [developerId],
    ),
    deps.db.query<{ revenue: string; transactions: number }>(
      // numeric text: a sum past 2^53 cents read as a number would lose cents before rounding
      `SELECT coalesce(sum(usd_developer_amount_cents), 0)::text AS revenue, count(*)::int AS transactions
         FROM app_transactions WHERE developer_id = $1 AND status = 'paid'`,
      [developerId],
    ),
  ]);
  const rows = apps.rows.map((a) => ({
    appId: a.id,
    name: a.name,
    installCount: a.install_count,
    rating: Number(a.rating),
    reviewCount: a.review_count,
  }));
  return {
    apps: rows,
    // C14.12: a number with 2 decimals (USD roll-up of the developer's share of paid transactions),
    // the number nearest the exact sum
    totalRevenue: Number(formatMinor(BigInt(totals.rows[0].revenue))),
    totalInstalls: rows.reduce((sum, a) => sum + a.installCount, 0),
    totalTransactions: totals.rows[0].transactions,
  };
}

/**
 * One app's earnings for its developer (the dashboard's app overview): the developer's share of the
 * app's paid transactions, rolled up in USD as `developerAnalytics` rolls up all of them (C14.12).
 */
export async function appEarnings(deps: Deps, developerId: string, appId: string): Promise<{ revenueUsd: string; transactions: number }> {
  const { rows } = await deps.db.query<{ revenue: string; transactions: number }>(
    `SELECT coalesce(sum(usd_developer_amount_cents), 0)::text AS revenue, count(*)::int AS transactions
       FROM app_transactions WHERE developer_id = $1 AND app_id = $2 AND status = 'paid'`,
    [developerId, appId],
  );
  return { revenueUsd: formatMinor(BigInt(rows[0].revenue)), transactions: rows[0].transactions };
}

type InstallationWithStore = InstallationRow & { store_business: string; store_slug: string; store_email: string };

/** app-api.md Installation row: the installation view without app and scopes, with its store. */
export function developerInstallationView(row: InstallationWithStore) {
  const { appId: _appId, scopes: _scopes, ...installation } = installationView(row);
  return { ...installation, store: { id: row.store_id, business: row.store_business, storeURL: row.store_slug, email: row.store_email } };
}

/**
 * `GET /apps/developer/{appId}/installations`: newest first. Installs still waiting for their code
 * exchange (`pending`) are not installations yet and are left out.
 */
export async function appInstallations(deps: Deps, developer: PlatformUser, appId: string, page: Page) {
  await ownedApp(deps, developer, appId);
  const [{ rows }, counts] = await Promise.all([
    deps.db.query<InstallationWithStore>(
      `SELECT i.*, s.business AS store_business, s.slug AS store_slug, s.email AS store_email
         FROM installations i JOIN stores s ON s.id = i.store_id
        WHERE i.app_id = $1 AND i.status <> 'pending'
        ORDER BY i.created_at DESC, i.id DESC LIMIT $2 OFFSET $3`,
      [appId, page.limit, page.offset],
    ),
    deps.db.query<{ listed: number; active_subscribers: number; total_installs: number }>(
      `SELECT count(*)::int AS listed,
              count(*) FILTER (WHERE status = 'active' AND billing_status IN ('active', 'trialing'))::int AS active_subscribers,
              count(*) FILTER (WHERE status = 'active')::int AS total_installs
         FROM installations WHERE app_id = $1 AND status <> 'pending'`,
      [appId],
    ),
  ]);
  const c = counts.rows[0];
  return {
    data: {
      installations: rows.map(developerInstallationView),
      activeSubscribers: c.active_subscribers,
      // C14.12: installations with status active only
      totalInstalls: c.total_installs,
    },
    listed: c.listed,
  };
}
