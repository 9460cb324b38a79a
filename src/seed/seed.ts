// First-run demo data (C1.5). Loaded once: on an empty database in development (SVC_SEED unset), or
// when SVC_SEED=demo and the demo has not been loaded yet. The banner is src/seed/banner.ts.
import type { Deps } from '../deps.js';
import { login, signup } from '../accounts/accounts.service.js';
import { createApp } from '../apps/apps.service.js';
import { SCOPES } from '../oauth/scopes.js';
import { insertDemoStoreData } from './demo-store.js';
import { demoAccessToken } from './demo-token.js';
import { uuidv7 } from '../ids.js';

export const DEMO = {
  merchant: { email: 'merchant@demo.test', password: 'demo-merchant-pass', name: 'Dana Merchant', storeName: 'Demo Store' },
  partner: { email: 'partner@demo.test', password: 'demo-partner-pass', name: 'Pat Partner' },
  appName: 'Demo Inventory Sync',
};

const SEEDED_KEY = 'demo_seeded';

/** Loads the demo when it is due; answers whether it did. */
export async function seedIfEmpty(deps: Deps): Promise<boolean> {
  const mode = deps.config.seed;
  if (mode === 'none') return false;
  const seeded = await deps.db.query('SELECT 1 FROM platform_settings WHERE key = $1', [SEEDED_KEY]);
  if (seeded.rows.length) return false;
  if (mode === 'auto') {
    const { rows } = await deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE role <> 'SUPER_ADMIN'`);
    if (rows[0].n > 0) return false;
  }
  await loadDemo(deps);
  await deps.db.query('INSERT INTO platform_settings (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING', [SEEDED_KEY, JSON.stringify({ at: deps.clock.now() })]);
  return true;
}

export interface DemoHandles {
  storeId: string;
  storeSlug: string;
  appId: string;
  clientId: string;
  accessToken: string;
}

export async function loadDemo(deps: Deps): Promise<DemoHandles> {
  const merchant = await signup(deps, { ...DEMO.merchant, role: 'MERCHANT' });
  const partner = await signup(deps, { ...DEMO.partner, role: 'PARTNER' });
  const partnerUser = { id: partner.user.id, role: 'PARTNER' as const, storeId: null };
  // The demo app's URL is an example host that need not resolve: seeding must not depend on DNS.
  const seedDeps = { ...deps, config: { ...deps.config, allowPrivateWebhooks: true } };
  const { app } = await createApp(seedDeps, partnerUser, {
    name: DEMO.appName,
    appUrl: 'https://demo-app.example.com',
    scopes: SCOPES.filter((s) => s.startsWith('read_') || s.startsWith('write_')),
    tier: 'pro',
    // A sales channel, so the demo store shows a product listing (C6.2).
    extensions: { salesChannel: true },
  });
  const storeId = merchant.store!.id;
  await deps.db.transaction((tx) => insertDemoStoreData(tx, storeId, deps.clock.now()));
  const accessToken = await demoAccessToken(deps, { storeId, clientId: app.clientId, clientSecret: app.clientSecret! });
  // The demo app lists the store's tee on its sales channel, as it would through the App API.
  await deps.db.query(
    `INSERT INTO product_listings (id, store_id, app_id, product_id, external_id, created_at, updated_at)
     SELECT $1, $2, $3, p.id, 'demo-channel-tee', $4, $4 FROM products p WHERE p.store_id = $2 AND p.handle = 'classic-tee'`,
    [uuidv7(), storeId, app.appId, deps.clock.now()],
  );
  await login(deps, DEMO.merchant, 'seed'); // proves the printed credentials work
  return { storeId, storeSlug: merchant.store!.storeURL, appId: app.appId, clientId: app.clientId, accessToken };
}
