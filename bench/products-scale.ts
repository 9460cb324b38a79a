// The catalog scenario of the benchmark (issue 3): `GET /api/v1/products.json?limit=50` on stores of
// 1,000, 10,000 and 100,000 products, measured in turn in the same rounds (bench/series.ts). The
// list must cost the same whatever the store's size (an index scan of one page, no full scan, no
// query per product): the target is that throughput at 100,000 products is within 20 % of
// throughput at 1,000. The `products50` scenario (issue 11: server CPU per request of a page of 50)
// uses the 1,000-product store alone. Products are written in bulk
// with generate_series (service calls would measure the write path instead). Several enterprise
// apps per store, their tokens cycled, so the per-(app, store) rate limit is never what is measured.
import type { Deps } from '../src/deps.js';
import { signup } from '../src/accounts/accounts.service.js';
import { createApp } from '../src/apps/apps.service.js';
import { installForBench } from './install.js';

export const PRODUCT_SCALE_SIZES = [1_000, 10_000, 100_000];
const APPS_PER_STORE = 8;

export interface ProductScaleStore {
  size: number;
  tokens: string[];
}

export async function setupProductScaleBench(deps: Deps, partnerId: string, sizes = PRODUCT_SCALE_SIZES): Promise<ProductScaleStore[]> {
  const apps = [];
  for (let i = 0; i < APPS_PER_STORE; i++) {
    const { app } = await createApp(deps, { id: partnerId, role: 'PARTNER', storeId: null }, {
      name: `Bench Catalog Reader ${i}`, appUrl: 'https://bench-app.example.com', scopes: ['read_products'], tier: 'enterprise',
    });
    apps.push(app);
  }
  const stores: ProductScaleStore[] = [];
  for (const size of sizes) {
    const merchant = await signup(deps, {
      email: `bench-catalog-${size}@bench.test`, password: 'bench-merchant-pass', name: 'Bench Catalog', storeName: `Bench Catalog ${size}`, role: 'MERCHANT',
    });
    const storeId = merchant.store!.id;
    const now = deps.clock.nowMs();
    // Spread over the last `size` minutes so the newest-first order is real work for the index.
    await deps.db.query(
      `INSERT INTO products (id, store_id, title, handle, body_html, vendor, product_type, status, tags, price_minor, inventory_quantity, sku, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'Catalog item ' || g, 'catalog-item-' || g, '<p>Item ' || g || '</p>', 'Bench', 'Bench',
              CASE WHEN g % 10 = 0 THEN 'draft' ELSE 'active' END, '["bench"]', 1000 + g % 5000, g % 100, 'CAT-' || g,
              to_timestamp(($2::bigint - g::bigint * 60000) / 1000.0), to_timestamp(($2::bigint - g::bigint * 60000) / 1000.0)
         FROM generate_series(1, $3::int) g`,
      [storeId, now, size],
    );
    const tokens = [];
    for (const app of apps) tokens.push(await installForBench(deps, storeId, app.clientId, app.clientSecret!));
    stores.push({ size, tokens });
  }
  await deps.db.query('ANALYZE products');
  return stores;
}
