// What a newcomer needs (C1.5), printed on every development start while the demo store exists,
// once the service listens. Printing it only on the start that loaded the demo lost it for good
// when that start then failed (port taken): the token was unknowable. Each start mints a new access
// token for the demo installation; earlier ones stay valid for their 24 hours.
import type { Deps } from '../deps.js';
import { DEMO } from './seed.js';
import { demoAccessToken } from './demo-token.js';

interface DemoStore {
  storeId: string;
  storeSlug: string;
  clientId: string;
  clientSecretEnc: string;
  /** The installation's status; null when the demo app is not installed on the demo store. */
  installation: string | null;
  scopes: string[] | null;
}

/** The demo, found by its accounts; null once it is gone (or was never loaded). */
async function findDemo(deps: Deps): Promise<DemoStore | null> {
  const { rows } = await deps.db.query<DemoStore>(
    `SELECT s.id AS "storeId", s.slug AS "storeSlug", a.client_id AS "clientId", a.client_secret_enc AS "clientSecretEnc",
            i.status AS installation, i.scopes
       FROM users m JOIN stores s ON s.id = m.store_id
       JOIN users p ON lower(p.email) = $2
       JOIN apps a ON a.developer_id = p.id AND a.name = $3
       LEFT JOIN installations i ON i.app_id = a.id AND i.store_id = s.id
      WHERE lower(m.email) = $1
      ORDER BY a.created_at LIMIT 1`,
    [DEMO.merchant.email, DEMO.partner.email, DEMO.appName],
  );
  return rows[0] ?? null;
}

/** The banner, or null: in production (never a token in its logs), or when there is no demo. */
export async function demoBanner(deps: Deps): Promise<string | null> {
  if (deps.config.production) return null;
  const demo = await findDemo(deps);
  if (!demo) return null;
  // A merchant who uninstalled the demo app meant it: no token, and no reinstall behind their back.
  const token = demo.installation === 'active'
    ? await demoAccessToken(deps, { storeId: demo.storeId, clientId: demo.clientId, clientSecret: deps.secrets.open(demo.clientSecretEnc), scope: demo.scopes?.join(',') })
    : null;
  const url = deps.config.baseUrl;
  return [
    '',
    '  Demo store (shown on each development start while the demo data exists; a new token each time).',
    `  URL:            ${url}   (API reference: ${url}/docs)`,
    `  Merchant login: ${DEMO.merchant.email} / ${DEMO.merchant.password}   (store "${DEMO.merchant.storeName}", ${demo.storeSlug})`,
    `  Partner login:  ${DEMO.partner.email} / ${DEMO.partner.password}   (app "${DEMO.appName}", client id ${demo.clientId})`,
    ...(token
      ? [
          `  App access token (valid 24 h): ${token}`,
          '  Try it:',
          `    curl -s -H "Authorization: Bearer ${token}" ${url}/api/v1/products.json`,
        ]
      : ['  The demo app is not installed on the demo store: install it as README.md shows ("Try it in one minute").']),
    '  The whole install flow, step by step: README.md, "Try it in one minute".',
    '',
  ].join('\n');
}

/** main.ts: the banner must never stop a service that is up, so a failure is only reported. */
export async function printDemoBanner(deps: Deps): Promise<void> {
  try {
    const banner = await demoBanner(deps);
    if (banner) console.log(banner);
  } catch (err) {
    console.error('could not print the demo banner:', err);
  }
}
