// First-run demo data (C1.5). Loaded once: on an empty database in development (SVC_SEED unset), or
// when SVC_SEED=demo and the demo has not been loaded yet. The banner is src/seed/banner.ts.
import type { Deps } from '../deps.js';
import { login, signup } from '../accounts/accounts.service.js';
import { findStore, findUserByEmail } from '../accounts/accounts.repo.js';
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
/**
 * Written before the demo's first row, `demo_seeded` after its last. A start stopped in between
 * (Ctrl-C during the first `npm start`, a crash) leaves the first without the second: the next
 * start finishes the demo rather than finding accounts and loading nothing more.
 */
const STARTED_KEY = 'demo_seed_started';
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
    await mark(deps, STARTED_KEY);
    await loadDemo(deps);
    await mark(deps, SEEDED_KEY);
    return true;
  });
}

const mark = (deps: Deps, key: string) =>
  deps.db.query('INSERT INTO platform_settings (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING', [key, JSON.stringify({ at: deps.clock.now() })]);

/**
 * Not loaded yet and: started by an earlier start that did not finish, or asked for (SVC_SEED=demo),
 * or, in 'auto' mode, the database has no accounts (besides the operator).
 */
async function demoDue(deps: Deps): Promise<boolean> {
  const marks = await deps.db.query<{ key: string }>('SELECT key FROM platform_settings WHERE key = $1 OR key = $2', [SEEDED_KEY, STARTED_KEY]);
  if (marks.rows.some((r) => r.key === SEEDED_KEY)) return false;
  if (marks.rows.length || deps.config.seed === 'demo') return true;
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

/**
 * The demo, step by step; every step finds what an earlier, interrupted load already wrote and
 * writes only what is missing, so a load stopped anywhere is finished by the next one.
 */
export async function loadDemo(deps: Deps): Promise<DemoHandles> {
  const merchant = await demoAccount(deps, { ...DEMO.merchant, role: 'MERCHANT' });
  const partner = await demoAccount(deps, { ...DEMO.partner, role: 'PARTNER' });
  const app = await demoApp(deps, partner.userId);
  const storeId = merchant.storeId!;
  await deps.db.transaction(async (tx) => {
    // The store's data is one transaction: one of its rows there means all of them.
    const { rows } = await tx.query(`SELECT 1 FROM products WHERE store_id = $1 AND handle = 'classic-tee'`, [storeId]);
    if (!rows.length) await insertDemoStoreData(tx, storeId, deps.clock.now());
  });
  // The install; a repeated one (a resumed load) is a new token for the same installation.
  const accessToken = await demoAccessToken(deps, { storeId, clientId: app.clientId, clientSecret: app.clientSecret });
  // The demo app lists the store's tee on its sales channel, as it would through the App API.
  await deps.db.query(
    `INSERT INTO product_listings (id, store_id, app_id, product_id, external_id, created_at, updated_at)
     SELECT $1, $2, $3, p.id, 'demo-channel-tee', $4, $4 FROM products p WHERE p.store_id = $2 AND p.handle = 'classic-tee'
     ON CONFLICT (app_id, product_id) DO NOTHING`,
    [uuidv7(), storeId, app.appId, deps.clock.now()],
  );
  await demoCheckout(deps, storeId, merchant.storeSlug!);
  await login(deps, DEMO.merchant, 'seed'); // proves the printed credentials work
  return { storeId, storeSlug: merchant.storeSlug!, appId: app.appId, clientId: app.clientId, accessToken };
}

/** A demo account: the one an interrupted load made, or a new one. */
async function demoAccount(
  deps: Deps,
  account: { email: string; password: string; name: string; role: 'MERCHANT' | 'PARTNER'; storeName?: string },
): Promise<{ userId: string; storeId: string | null; storeSlug: string | null }> {
  const found = await findUserByEmail(deps.db, account.email);
  if (!found) {
    const made = await signup(deps, account);
    return { userId: made.user.id, storeId: made.store?.id ?? null, storeSlug: made.store?.storeURL ?? null };
  }
  // Someone else's account under the demo's published email: say so, rather than load a demo whose
  // printed login is not that account's.
  if (found.role !== account.role || (account.role === 'MERCHANT' && !found.store_id)) {
    throw new Error(`cannot load the demo: the account ${account.email} exists and is not the demo's ${account.role.toLowerCase()} (start with SVC_SEED=none, or on an empty data dir)`);
  }
  const store = found.store_id ? await findStore(deps.db, found.store_id) : null;
  return { userId: found.id, storeId: store?.id ?? null, storeSlug: store?.slug ?? null };
}

/** The demo app: the one an interrupted load made, or a new one. */
async function demoApp(deps: Deps, partnerId: string): Promise<{ appId: string; clientId: string; clientSecret: string }> {
  const { rows } = await deps.db.query<{ id: string; client_id: string; client_secret_enc: string }>(
    'SELECT id, client_id, client_secret_enc FROM apps WHERE developer_id = $1 AND name = $2 ORDER BY created_at, id LIMIT 1',
    [partnerId, DEMO.appName],
  );
  if (rows[0]) return { appId: rows[0].id, clientId: rows[0].client_id, clientSecret: deps.secrets.open(rows[0].client_secret_enc) };
  const partnerUser = { id: partnerId, role: 'PARTNER' as const, storeId: null };
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
  return { appId: app.appId, clientId: app.clientId, clientSecret: app.clientSecret! };
}

/**
 * A buyer's checkout on the demo store (3 tees to the US), quoted once: the demo functions run on
 * it, so the developer's function logs have runs to show from the start. Not again on a resumed load.
 */
async function demoCheckout(deps: Deps, storeId: string, storeURL: string): Promise<void> {
  const made = await deps.db.query('SELECT 1 FROM checkouts WHERE store_id = $1 AND email = $2 LIMIT 1', [storeId, DEMO_BUYER]);
  if (made.rows.length) return;
  const { rows } = await deps.db.query<{ id: string; variant_id: string }>(
    `SELECT p.id, (SELECT v.id FROM variants v WHERE v.product_id = p.id ORDER BY v.num_id LIMIT 1) AS variant_id
       FROM products p WHERE p.store_id = $1 AND p.handle = 'classic-tee'`,
    [storeId],
  );
  const checkout = await createCheckout(deps, storeURL, {
    email: DEMO_BUYER,
    line_items: [{ product_id: rows[0].id, variant_id: rows[0].variant_id, quantity: 3 }],
    shipping_address: { first_name: 'Sam', last_name: 'Buyer', address1: '1 Demo Way', city: 'Austin', province_code: 'TX', country_code: 'US', zip: '73301' },
  });
  await checkoutShippingRates(deps, storeURL, checkout.token);
}

const DEMO_BUYER = 'buyer@demo.test';
