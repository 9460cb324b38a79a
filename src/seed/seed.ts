// First-run demo data (C1.5). Loaded once: on an empty database in development (SVC_SEED unset), or
// when SVC_SEED=demo and the demo has not been loaded yet. The banner is src/seed/banner.ts.
import type { Deps } from '../deps.js';
import { login, signup } from '../accounts/accounts.service.js';
import { createApp } from '../apps/apps.service.js';
import { SCOPES } from '../oauth/scopes.js';
import { insertDemoStoreData } from './demo-store.js';
import { demoAccessToken } from './demo-token.js';
import { uuidv7 } from '../ids.js';
import { DEMO_FUNCTIONS } from './demo-functions.js';
import { checkoutShippingRates, createCheckout } from '../checkout/checkout.service.js';

export const DEMO = {
  merchant: { email: 'merchant@demo.test', password: 'demo-merchant-pass', name: 'Dana Merchant', storeName: 'Demo Store' },
  partner: { email: 'partner@demo.test', password: 'demo-partner-pass', name: 'Pat Partner' },
  appName: 'Demo Inventory Sync',
};

const SEEDED_KEY = 'demo_seeded';
/** The advisory lock's name: one process of a deployment loads the demo, the others wait for it. */
const SEED_LOCK = 'svc-demo-seed';

/**
 * Loads the demo when it is due; answers whether it did. Every process of a deployment runs this at
 * start, and on a new PostgreSQL database several may at once: under the lock, one loads the demo
 * while the others wait, then find it loaded and go on (docs/decisions.md, "Processes").
 */
export async function seedIfEmpty(deps: Deps): Promise<boolean> {
  if (deps.config.seed === 'none') return false;
  return deps.db.exclusively(SEED_LOCK, async () => {
    if (!(await demoDue(deps))) return false;
    await loadDemo(deps);
    await deps.db.query('INSERT INTO platform_settings (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING', [SEEDED_KEY, JSON.stringify({ at: deps.clock.now() })]);
    return true;
  });
}

/** Not loaded yet and, in 'auto' mode, the database has no accounts (besides the operator). */
async function demoDue(deps: Deps): Promise<boolean> {
  const seeded = await deps.db.query('SELECT 1 FROM platform_settings WHERE key = $1', [SEEDED_KEY]);
  if (seeded.rows.length) return false;
  if (deps.config.seed === 'demo') return true;
  const { rows } = await deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE role <> 'SUPER_ADMIN'`);
  return rows[0].n === 0;
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
    // A sales channel, so the demo store shows a product listing (C6.2); and a function of each
    // target (C11), active on the demo store once the app is installed.
    extensions: { salesChannel: true, functions: DEMO_FUNCTIONS },
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
  await demoCheckout(deps, merchant.store!.storeURL);
  await login(deps, DEMO.merchant, 'seed'); // proves the printed credentials work
  return { storeId, storeSlug: merchant.store!.storeURL, appId: app.appId, clientId: app.clientId, accessToken };
}

/**
 * A buyer's checkout on the demo store (3 tees to the US), quoted once: the demo functions run on
 * it, so the developer's function logs have runs to show from the start.
 */
async function demoCheckout(deps: Deps, storeURL: string): Promise<void> {
  const { rows } = await deps.db.query<{ id: string; variant_id: string }>(
    `SELECT p.id, (SELECT v.id FROM variants v WHERE v.product_id = p.id ORDER BY v.num_id LIMIT 1) AS variant_id
       FROM products p JOIN stores s ON s.id = p.store_id WHERE s.slug = $1 AND p.handle = 'classic-tee'`,
    [storeURL],
  );
  const checkout = await createCheckout(deps, storeURL, {
    email: 'buyer@demo.test',
    line_items: [{ product_id: rows[0].id, variant_id: rows[0].variant_id, quantity: 3 }],
    shipping_address: { first_name: 'Sam', last_name: 'Buyer', address1: '1 Demo Way', city: 'Austin', province_code: 'TX', country_code: 'US', zip: '73301' },
  });
  await checkoutShippingRates(deps, storeURL, checkout.token);
}
