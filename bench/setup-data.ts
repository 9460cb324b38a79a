// Load-run data, written in the benchmark process straight through the service's own modules,
// before the server starts on the same database: one partner with `appsPerStore` `enterprise`-tier
// apps, `stores` merchants each with every one of those apps installed through the real OAuth flow
// (authorize -> handoff -> code exchange), and five products per store (the newest one with two
// variants). The rate limit is per (app, store) pair: stores x apps tokens, cycled by the load, put
// the limiter's cap (500 requests/s per pair) far above any scenario's throughput.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { startRuntime } from '../src/runtime.js';
import { openPGlite } from '../src/db/pglite.js';
import { openPostgres } from '../src/db/postgres.js';
import type { Db, Tx } from '../src/db/db.js';
import type { Deps } from '../src/deps.js';
import { signup } from '../src/accounts/accounts.service.js';
import { createApp } from '../src/apps/apps.service.js';
import { installForBench } from './install.js';
import { uuidv7 } from '../src/ids.js';
import { setupProductScaleBench, type ProductScaleStore } from './products-scale.js';
import { setupOrderBench, type OrderBenchData } from './orders.js';
import { setupCheckoutBench, type CheckoutBenchData } from './checkout.js';
import { setupDashboardBench, type DashboardBenchData } from './dashboard.js';

export interface BenchTarget {
  /** Service data dir (SVC_DATA_DIR); PGlite keeps its files in `<dataDir>/pgdata`. */
  dataDir: string;
  /** The bench database on a PostgreSQL server, or null for PGlite. */
  databaseUrl: string | null;
  secret: string;
}

export interface BenchData {
  /** One per (app, store) pair, store by store. */
  tokens: string[];
  storeIds: string[];
  appIds: string[];
  tier: string;
  /** The order scenarios' store (bench/orders.ts), when asked for. */
  orders: OrderBenchData | null;
  /** The catalog scaling stores (bench/products-scale.ts), when asked for. */
  catalog: ProductScaleStore[] | null;
  /** The checkout stores (bench/checkout.ts), when asked for. */
  checkout: CheckoutBenchData | null;
  /** The dashboard scenario's developer, app and history (bench/dashboard.ts), when asked for. */
  dashboard: DashboardBenchData | null;
}

/** The same environment the server child gets, as the service's own config. */
export function serviceEnv(target: BenchTarget): Record<string, string> {
  return {
    NODE_ENV: 'development',
    SVC_DATA_DIR: target.dataDir,
    SVC_SECRET: target.secret,
    SVC_SEED: 'none',
    LOG_LEVEL: 'warn',
    // The shipping apps' rate endpoint is a receiver on this machine (bench/checkout.ts).
    SVC_ALLOW_PRIVATE_WEBHOOKS: '1',
    ...(target.databaseUrl ? { DATABASE_URL: target.databaseUrl } : {}),
  };
}

async function openTargetDb(target: BenchTarget): Promise<Db> {
  if (target.databaseUrl) return openPostgres(target.databaseUrl);
  mkdirSync(target.dataDir, { recursive: true });
  return openPGlite({ dataDir: join(target.dataDir, 'pgdata') }); // where src/db/open.ts puts it
}

async function pool<T, R>(items: T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

export async function setupBenchData(
  target: BenchTarget, stores: number, appsPerStore: number, orders = 0, catalogSizes: number[] = [],
  checkout: { ratesUrl: string; uncached: number; complete: number } | null = null, dashboard = false,
): Promise<BenchData> {
  const config = loadConfig(serviceEnv(target), { persistSecret: false });
  const db = await openTargetDb(target);
  const runtime = await startRuntime(config, { db }); // migrates
  const { deps } = runtime;
  try {
    const partner = await signup(deps, { email: 'bench-partner@bench.test', password: 'bench-partner-pass', name: 'Bench Partner', role: 'PARTNER' });
    const apps = [];
    for (let i = 0; i < appsPerStore; i++) {
      const { app } = await createApp(deps, { id: partner.user.id, role: 'PARTNER', storeId: null }, {
        name: i ? `Bench Catalog Reader (${i + 1})` : 'Bench Catalog Reader',
        appUrl: 'https://bench-app.example.com',
        scopes: ['read_products', 'write_products', 'read_files'],
        tier: 'enterprise',
      });
      apps.push(app);
    }

    // scrypt runs on the thread pool: a few signups at once.
    const storeIds = await pool(Array.from({ length: stores }, (_, i) => i), 4, async (i) => {
      const merchant = await signup(deps, {
        email: `bench-merchant-${i}@bench.test`,
        password: 'bench-merchant-pass',
        name: `Bench Merchant ${i}`,
        storeName: `Bench Store ${i}`,
        role: 'MERCHANT',
      });
      return merchant.store!.id;
    });

    const tokens: string[] = [];
    for (const storeId of storeIds) {
      await deps.db.transaction((tx) => insertProducts(tx, storeId, deps.clock.now()));
      for (const app of apps) tokens.push(await installForBench(deps, storeId, app.clientId, app.clientSecret!));
    }

    const orderData = orders > 0 ? await setupOrderBench(deps, partner.user.id, orders) : null;
    const catalog = catalogSizes.length ? await setupProductScaleBench(deps, partner.user.id, catalogSizes) : null;
    const checkoutData = checkout ? await setupCheckoutBench(deps, partner.user.id, checkout.ratesUrl, checkout) : null;
    const dashboardData = dashboard ? await setupDashboardBench(deps) : null;
    const { rows } = await deps.db.query<{ installs: number; products: number; variants: number }>(
      `SELECT (SELECT count(*)::int FROM installations WHERE app_id = ANY($1) AND status = 'active') AS installs,
              (SELECT count(*)::int FROM products) AS products, (SELECT count(*)::int FROM variants) AS variants`,
      [apps.map((a) => a.appId)],
    );
    if (rows[0].installs !== stores * appsPerStore) throw new Error(`expected ${stores * appsPerStore} active installations, found ${rows[0].installs}`);
    return { tokens, storeIds, appIds: apps.map((a) => a.appId), tier: apps[0].tier, orders: orderData, catalog, checkout: checkoutData, dashboard: dashboardData };
  } finally {
    await runtime.close();
  }
}

const MINUTE = 60_000;

/** Five products, one image each; the newest (what `?limit=1` returns) has two variants. */
async function insertProducts(tx: Tx, storeId: string, now: Date): Promise<void> {
  const items: [title: string, price: number, compareAt: number | null, stock: number, status: string][] = [
    ['Linen Shirt', 4200, 5000, 12, 'active'],
    ['Wool Beanie', 1900, null, 40, 'active'],
    ['Leather Wallet', 3500, null, 8, 'draft'],
    ['Enamel Pin', 600, null, 120, 'active'],
    ['Running Shoe', 8900, 9900, 30, 'active'],
  ];
  for (const [k, [title, price, compareAt, stock, status]] of items.entries()) {
    const created = new Date(now.getTime() - (items.length - k) * MINUTE);
    const id = uuidv7(created.getTime());
    const handle = title.toLowerCase().replace(/\s+/g, '-');
    await tx.query(
      `INSERT INTO products (id, store_id, title, handle, body_html, category, vendor, product_type, status, tags,
         price_minor, compare_at_price_minor, inventory_quantity, sku, created_at, updated_at)
       VALUES ($1,$2,$3,$4,$5,'Bench','Bench Vendor','Bench',$6,$7,$8,$9,$10,$11,$12,$12)`,
      [id, storeId, title, handle, `<p>${title} for the benchmark.</p>`, status, JSON.stringify(['bench', handle]), price, compareAt, stock,
        `SKU-${handle.toUpperCase()}`, created],
    );
    await tx.query('INSERT INTO product_images (product_id, src, position) VALUES ($1, $2, 1)', [id, `https://cdn.example.com/bench/${handle}.jpg`]);
    if (k === items.length - 1) {
      for (const [i, size] of ['41', '42'].entries()) {
        await tx.query(
          `INSERT INTO variants (id, product_id, store_id, name, value, price_minor, discount_price_minor, stock, sku, weight, weight_unit, position, created_at, updated_at)
           VALUES ($1,$2,$3,'Size',$4,$5,$6,15,$7,0.8,'kg',$8,$9,$9)`,
          [uuidv7(created.getTime()), id, storeId, size, compareAt ?? price, price, `SHOE-${size}`, i + 1, created],
        );
      }
    }
  }
}
