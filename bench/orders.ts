// The order scenarios of the benchmark (issue 4): one store with BENCH_ORDERS orders (default
// 100,000) written in bulk with generate_series (not through the service: 100k service calls would
// take minutes and measure the write path instead), each with two line items, a customer out of
// 5,000, a shipping address and (when paid) a sale transaction, spread over the last 365 days; a
// year of storefront sessions and page views. Then:
//   order       GET /api/v1/orders/{id}.json over a few hundred of those orders (target: at least 50 %
//               of the pk-select floor's throughput)
//   orders      GET /api/v1/orders.json?limit=50 (the newest page, list view)
//   analytics   GET /api/v1/analytics/sales?range=last_90_days, one request at a time (target < 300 ms)
// The rate limit is per (app, store): the store has several enterprise apps installed, and the load
// cycles their tokens, so the limiter is never what is measured.
import type { Deps } from '../src/deps.js';
import { signup } from '../src/accounts/accounts.service.js';
import { createApp } from '../src/apps/apps.service.js';
import { installForBench } from './install.js';

export interface OrderBenchData {
  storeId: string;
  tokens: string[];
  orderIds: string[];
  count: number;
}

export const BENCH_ORDER_APPS = 40;

/** A 32-hex-digit UUID v7 for the instant `ts` (SQL), random below the millisecond. */
const UUID_V7 = (ts: string) =>
  `(lpad(to_hex((extract(epoch FROM ${ts}) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 3)
    || substr('89ab', 1 + floor(random() * 4)::int, 1) || substr(md5(random()::text), 1, 15))::uuid`;

export async function setupOrderBench(deps: Deps, partnerId: string, count: number): Promise<OrderBenchData> {
  const merchant = await signup(deps, {
    email: 'bench-orders@bench.test', password: 'bench-merchant-pass', name: 'Bench Orders', storeName: 'Bench Orders Store', role: 'MERCHANT',
  });
  const storeId = merchant.store!.id;
  const tokens: string[] = [];
  for (let i = 0; i < BENCH_ORDER_APPS; i++) {
    const { app } = await createApp(deps, { id: partnerId, role: 'PARTNER', storeId: null }, {
      name: `Bench Order Reader ${i}`, appUrl: 'https://bench-app.example.com', scopes: ['read_orders', 'read_analytics'], tier: 'enterprise',
    });
    tokens.push(await installForBench(deps, storeId, app.clientId, app.clientSecret!));
  }
  const db = deps.db;
  const now = deps.clock.now();
  await db.query(
    `INSERT INTO products (id, store_id, title, handle, price_minor, inventory_quantity, sku, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'Bench item ' || g, 'bench-item-' || g, 500 + g * 250, 1000000, 'BENCH-' || g, $2, $2
       FROM generate_series(1, 8) g`,
    [storeId, now],
  );
  await db.query(
    `INSERT INTO customers (id, store_id, email, name, phone, created_at, updated_at)
     SELECT ${UUID_V7(`$2::timestamptz - interval '400 days'`)}, $1, 'buyer' || lpad(g::text, 4, '0') || '@bench.test', 'Buyer ' || g, '+1555' || lpad(g::text, 6, '0'),
            $2::timestamptz - interval '400 days', $2::timestamptz - interval '400 days'
       FROM generate_series(1, 5000) g`,
    [storeId, now],
  );
  // Orders: created evenly over the 365 days before now; statuses by order number.
  await db.query(
    `WITH c AS (SELECT array_agg(id ORDER BY email) AS ids FROM customers WHERE store_id = $1),
          p AS (SELECT array_agg(price_minor ORDER BY sku) AS prices FROM products WHERE store_id = $1),
          g AS (SELECT g, $2::timestamptz - ($3::int - g) * (interval '365 days' / $3::int) AS at FROM generate_series(1, $3::int) g)
     INSERT INTO orders (id, store_id, order_number, customer_id, email, phone, status, financial_status, fulfillment_status, cancelled_at,
                         currency, subtotal_minor, tax_minor, tax_rate, shipping_minor, total_minor, paid_minor, payment_method,
                         shipping_address, billing_address, shipping_line, tags, confirmation_number, processed_at, created_at, updated_at)
     SELECT ${UUID_V7('g.at')}, $1, 1000 + g.g, c.ids[1 + g.g % 5000], 'buyer' || lpad((1 + g.g % 5000)::text, 4, '0') || '@bench.test', '+15550100',
            s.status, CASE WHEN s.status IN ('pending', 'confirmed') THEN 'pending' ELSE 'paid' END,
            CASE s.status WHEN 'shipped' THEN 'fulfilled' WHEN 'delivered' THEN 'fulfilled' WHEN 'partial' THEN 'partial' ELSE 'unfulfilled' END,
            CASE WHEN s.status = 'canceled' THEN g.at + interval '1 hour' END,
            'USD', t.sub, t.tax, 0.08, 500, t.sub + t.tax + 500, CASE WHEN s.status IN ('pending', 'confirmed') THEN 0 ELSE t.sub + t.tax + 500 END,
            CASE WHEN s.status IN ('pending', 'confirmed') THEN 'cod' ELSE 'card' END,
            jsonb_build_object('first_name', 'Buyer', 'last_name', (1 + g.g % 5000)::text, 'address1', g.g || ' Bench Street', 'city', 'Benchville',
                               'province', (ARRAY['CA','NY','TX','FL','WA','IL','PA','OH','GA','NC','MI','NJ','VA','AZ','MA'])[1 + g.g % 15],
                               'country', 'United States', 'country_code', 'US', 'zip', lpad((g.g % 99999)::text, 5, '0')),
            jsonb_build_object('first_name', 'Buyer', 'last_name', (1 + g.g % 5000)::text, 'address1', g.g || ' Bench Street', 'city', 'Benchville',
                               'country', 'United States', 'country_code', 'US'),
            '{"title": "Standard", "code": "standard", "source": null, "price": "5.00"}', '["bench"]', 'B' || g.g, g.at, g.at, g.at
       FROM g, c, p,
            LATERAL (SELECT (ARRAY['paid','paid','paid','paid','paid','paid','paid','shipped','shipped','delivered','delivered','pending',
                                   'confirmed','partial','canceled','paid','paid','paid','paid','paid'])[1 + g.g % 20] AS status) s,
            LATERAL (SELECT p.prices[1 + g.g % 8] * (1 + g.g % 3) + p.prices[1 + (g.g + 3) % 8] AS sub) s1,
            LATERAL (SELECT s1.sub, (s1.sub * 8 + 50) / 100 AS tax) t`,
    [storeId, now, count],
  );
  await db.query(
    `WITH p AS (SELECT array_agg(id ORDER BY sku) AS ids, array_agg(num_id ORDER BY sku) AS nums, array_agg(title ORDER BY sku) AS titles,
                       array_agg(sku ORDER BY sku) AS skus, array_agg(price_minor ORDER BY sku) AS prices FROM products WHERE store_id = $1)
     INSERT INTO order_line_items (id, order_id, product_id, product_num_id, title, sku, quantity, price_minor, stock_deducted, fulfilled_quantity, position)
     SELECT gen_random_uuid(), o.id, p.ids[q.i], p.nums[q.i], p.titles[q.i], p.skus[q.i], q.qty, p.prices[q.i], o.status <> 'canceled',
            CASE WHEN o.fulfillment_status = 'fulfilled' THEN q.qty ELSE 0 END, k
       FROM orders o
       CROSS JOIN p
       CROSS JOIN generate_series(1, 2) k
       CROSS JOIN LATERAL (SELECT CASE WHEN k = 1 THEN 1 + (o.order_number - 1000) % 3 ELSE 1 END AS qty,
                                  1 + CASE WHEN k = 1 THEN (o.order_number - 1000) % 8 ELSE (o.order_number - 1000 + 3) % 8 END AS i) q
      WHERE o.store_id = $1`,
    [storeId],
  );
  await db.query(
    `INSERT INTO order_transactions (id, order_id, store_id, kind, status, gateway, amount_minor, created_at)
     SELECT gen_random_uuid(), id, store_id, 'sale', 'success', payment_method, total_minor, created_at FROM orders WHERE store_id = $1 AND paid_minor > 0`,
    [storeId],
  );
  // Storefront traffic: 150 sessions a day for a year, two page views each.
  await db.query(
    `INSERT INTO storefront_events (id, store_id, type, session_id, source, path, occurred_at, created_at)
     SELECT gen_random_uuid(), $1, t.type, 'sess-' || g, (ARRAY['google','instagram',NULL,'newsletter','facebook'])[1 + g % 5],
            CASE WHEN t.type = 'session' THEN '/' ELSE '/products/' || (g % 8) END, at, at
       FROM generate_series(1, 54750) g
       CROSS JOIN LATERAL (SELECT $2::timestamptz - (54750 - g) * (interval '365 days' / 54750) AS at) a
       CROSS JOIN (VALUES ('session'), ('page_view'), ('page_view')) t(type)`,
    [storeId, now],
  );
  await db.query(`UPDATE stores SET next_order_number = $2 WHERE id = $1`, [storeId, 1001 + count]);
  // What autovacuum does after a bulk load (PostgreSQL 13+ vacuums insert-only tables too): statistics,
  // and the visibility map that lets analytics read its covering index alone.
  for (const table of ['orders', 'order_line_items', 'order_transactions', 'customers', 'storefront_events', 'products']) await db.exec(`VACUUM ANALYZE ${table}`);
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM orders WHERE store_id = $1 AND order_number % $2 = 0 ORDER BY order_number LIMIT 500`,
    [storeId, Math.max(1, Math.floor(count / 500))],
  );
  return { storeId, tokens, orderIds: rows.map((r) => r.id), count };
}

export interface Latency {
  samples: number;
  p50: number;
  p95: number;
  max: number;
}

/** Before any load: the order routes answer what the scenarios expect. */
export async function orderSanityCheck(base: string, data: OrderBenchData): Promise<void> {
  const auth = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });
  for (const [i, token] of data.tokens.entries()) {
    const res = await fetch(`${base}/api/v1/orders/${data.orderIds[i % data.orderIds.length]}.json`, auth(token));
    const body = (await res.json()) as any;
    if (res.status !== 200 || !body.order?.line_items?.length) throw new Error(`order read with token ${i}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    if (res.headers.get('x-ratelimit-limit') !== '500') throw new Error(`order token ${i}: not enterprise tier`);
  }
  const list = await fetch(`${base}/api/v1/orders.json?limit=50`, auth(data.tokens[0]));
  const body = (await list.json()) as any;
  if (list.status !== 200 || body.orders?.length !== 50 || !list.headers.get('link')) throw new Error(`orders list: ${list.status}, ${body.orders?.length} orders`);
  const sales = await fetch(`${base}/api/v1/analytics/sales?range=last_90_days`, auth(data.tokens[0]));
  const data90 = (await sales.json()) as any;
  if (sales.status !== 200 || Object.keys(data90.data?.ordersData?.ordersByDay ?? {}).length !== 90) throw new Error(`analytics: ${sales.status}`);
}

/** One request at a time (after a few warm-up requests): the latency a merchant's dashboard sees. */
export async function analyticsLatency(base: string, tokens: string[], samples = 30, warmup = 5): Promise<Latency & { orders: number }> {
  const times: number[] = [];
  let orders = 0;
  for (let i = 0; i < warmup + samples; i++) {
    const t0 = performance.now();
    const res = await fetch(`${base}/api/v1/analytics/sales?range=last_90_days`, { headers: { authorization: `Bearer ${tokens[i % tokens.length]}` } });
    const body = (await res.json()) as any;
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`analytics: ${res.status}`);
    orders = body.data.ordersData.totalOrders + body.data.cancelOrdersCount;
    if (i >= warmup) times.push(ms);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)];
  return { samples, p50: at(50), p95: at(95), max: times[times.length - 1], orders };
}
