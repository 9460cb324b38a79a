// The dashboard scenario of the benchmark (issue 15: "pages render fast with large histories (10,000
// deliveries, 10,000 runs: paged, server time under 50 ms)"). One developer with one app, installed on
// one store, whose history is written in bulk with generate_series (as bench/orders.ts writes
// orders; 20,000 service calls would measure the write path instead):
//   - 10,000 webhook deliveries over the last 20 days (inside the 30-day retention, so the
//     service's retention job leaves them alone), topics in turn, each with the headers and a
//     ~1.5 KB order body as sent, the endpoint's response and its attempts: 85 % success at the
//     first attempt, 5 % success at the second, 6 % failed after 4 attempts, 4 % retrying after 2
//     (next attempt a day ahead, so the service's workers do not pick them up during the run);
//   - 10,000 function runs of its three delivery functions over the same 20 days, each with a ~2 KB
//     input (the checkout, its lines, the delivery options), a small output, a sealed checkout token
//     (as recorded runs have), 5 % failures with an error.
// Then the benchmark signs in through the login form (its CSRF token and nonce cookie) and measures
// the developer pages with the session cookie, one page per series.
import type { Deps } from '../src/deps.js';
import { signup } from '../src/accounts/accounts.service.js';
import { createApp } from '../src/apps/apps.service.js';
import { installForBench } from './install.js';
import { DELIVERY_FUNCTIONS } from './checkout.js';

export const DASHBOARD_DELIVERIES = 10_000;
export const DASHBOARD_RUNS = 10_000;
const DAYS = 20;
const LOGIN = { email: 'bench-dashboard@bench.test', password: 'bench-dashboard-pass' };

export interface DashboardBenchData {
  appId: string;
  login: { email: string; password: string };
  /** Deliveries and runs to open, spread over the history (newest first). */
  deliveryIds: string[];
  runs: { handle: string; runId: string }[];
  deliveries: number;
  runCount: number;
}

/** The checkout scenario's three delivery functions: their runs fill the dashboard's log. */
const FUNCTIONS = DELIVERY_FUNCTIONS;

const TOPICS = ['orders/create', 'orders/updated', 'orders/paid', 'products/update', 'products/create', 'customers/create', 'app/uninstalled'];

/** An order payload as the service sends it (~1.5 KB); `#N#` is the delivery's number. */
const ORDER_BODY = JSON.stringify({
  id: '0192f0c4-0000-7000-8000-00000000#N#', order_number: '#N#', email: 'buyer#N#@bench.test', currency: 'USD', status: 'paid',
  financial_status: 'paid', fulfillment_status: 'unfulfilled', subtotal_price: '84.00', total_tax: '6.72', total_price: '95.72',
  shipping_address: { first_name: 'Buyer', last_name: '#N#', address1: '#N# Bench Street', city: 'Benchville', province: 'CA', country: 'United States', country_code: 'US', zip: '94105' },
  billing_address: { first_name: 'Buyer', last_name: '#N#', address1: '#N# Bench Street', city: 'Benchville', country: 'United States', country_code: 'US' },
  line_items: [
    { id: 1, product_id: 1001, title: 'Linen Shirt', sku: 'SKU-LINEN-SHIRT', quantity: 2, price: '42.00', variant_title: 'M' },
    { id: 2, product_id: 1002, title: 'Wool Beanie', sku: 'SKU-WOOL-BEANIE', quantity: 1, price: '19.00', variant_title: null },
  ],
  shipping_line: { title: 'Standard', code: 'standard', source: null, price: '5.00' },
  tags: ['bench'], note: 'Leave at the door, please.', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
});

/** A delivery-options function's input (~2 KB): the checkout, its lines, the options, the shop. */
const RUN_INPUT = JSON.stringify({
  checkout: {
    id: '0192f0c4-0000-7000-8000-00000000#N#', email: 'buyer#N#@bench.test', currency: 'USD', subtotal: '84.00',
    lines: [1, 2, 3].map((i) => ({ id: `line-${i}`, productId: `0192f0c4-0000-7000-8000-0000000000${i}0`, title: `Bench item ${i}`, sku: `BENCH-${i}`, quantity: i, price: `${10 * i}.00`, weight: 0.4 * i, weightUnit: 'kg' })),
    shippingAddress: { firstName: 'Buyer', lastName: '#N#', address1: '#N# Bench Street', city: 'Benchville', province: 'CA', country: 'United States', countryCode: 'US', zip: '94105' },
  },
  deliveryOptions: [
    { handle: 'zone-standard', code: 'Standard', title: 'Standard', price: '5.00', source: null, minDeliveryDays: 3, maxDeliveryDays: 5 },
    { handle: 'zone-express', code: 'Express', title: 'Express', price: '15.00', source: null, minDeliveryDays: 1, maxDeliveryDays: 2 },
    { handle: 'app-freight', code: 'Freight', title: 'Freight (Bench Shipping)', price: '22.50', source: 'bench-shipping', minDeliveryDays: 5, maxDeliveryDays: 9 },
  ],
  shop: { name: 'Bench Dashboard Store', currency: 'USD', locale: 'en-US', timezone: 'America/Los_Angeles' },
  configuration: { maxPrice: '14.00' },
});
const RUN_OUTPUT = JSON.stringify({ operations: [{ hide: { handle: 'app-freight' } }, { rename: { handle: 'zone-standard', title: 'Standard (tracked)' } }] });

export async function setupDashboardBench(deps: Deps): Promise<DashboardBenchData> {
  const developer = await signup(deps, { ...LOGIN, name: 'Bench Dashboard Developer', role: 'PARTNER' });
  const merchant = await signup(deps, {
    email: 'bench-dashboard-store@bench.test', password: 'bench-merchant-pass', name: 'Bench Dashboard Merchant', storeName: 'Bench Dashboard Store', role: 'MERCHANT',
  });
  const storeId = merchant.store!.id;
  const { app } = await createApp(deps, { id: developer.user.id, role: 'PARTNER', storeId: null }, {
    name: 'Bench Dashboard App', appUrl: 'https://bench-app.example.com', scopes: ['read_orders', 'read_products'], tier: 'enterprise',
    extensions: { functions: FUNCTIONS },
  });
  await installForBench(deps, storeId, app.clientId, app.clientSecret!);
  const appId = app.appId;
  const db = deps.db;
  const now = deps.clock.now();
  const { rows: fns } = await db.query<{ id: string; handle: string }>('SELECT id, handle FROM app_functions WHERE app_id = $1 ORDER BY position', [appId]);
  if (fns.length !== FUNCTIONS.length) throw new Error(`expected ${FUNCTIONS.length} declared functions, found ${fns.length}`);

  // Deliveries: g = 1 the oldest, g = N the newest; the status by g % 100.
  await db.query(
    `WITH g AS (SELECT g, $3::timestamptz - ($4::int - g) * (interval '${DAYS} days' / $4::int) AS at,
                       ($5::text[])[1 + g % array_length($5::text[], 1)] AS topic,
                       CASE WHEN g % 100 < 85 THEN 'success1' WHEN g % 100 < 90 THEN 'success2' WHEN g % 100 < 96 THEN 'failed' ELSE 'retrying' END AS kind
                  FROM generate_series(1, $4::int) g)
     INSERT INTO webhook_deliveries (id, webhook_id, source, app_id, store_id, topic, address, target_host, request_headers, request_body,
                                     status, attempt_count, max_attempts, next_attempt_at, response_status, response_body, last_error, created_at, updated_at)
     SELECT gen_random_uuid(), gen_random_uuid(), 'manifest', $1, $2::uuid, g.topic, 'https://bench-app.example.com/webhooks', 'bench-app.example.com:443',
            jsonb_build_object('Content-Type', 'application/json', 'User-Agent', 'SVC-Webhooks/1.0', 'X-SVC-Topic', g.topic,
                               'X-SVC-Store-Id', $2::uuid::text, 'X-SVC-Api-Version', '2025-01', 'X-SVC-Webhook-Id', md5(g.g::text),
                               'X-SVC-Hmac-Sha256', encode(sha256(g.g::text::bytea), 'base64'), 'X-SVC-Triggered-At', g.at::text),
            replace($6::text, '#N#', g.g::text),
            CASE g.kind WHEN 'failed' THEN 'failed' WHEN 'retrying' THEN 'retrying' ELSE 'success' END,
            CASE g.kind WHEN 'success1' THEN 1 WHEN 'success2' THEN 2 WHEN 'failed' THEN 4 ELSE 2 END, 4,
            CASE WHEN g.kind = 'retrying' THEN $3::timestamptz + interval '1 day' END,
            CASE g.kind WHEN 'failed' THEN 502 WHEN 'retrying' THEN 503 ELSE 200 END,
            CASE WHEN g.kind IN ('failed', 'retrying') THEN '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>'
                 ELSE '{"ok":true,"received":"' || md5(g.g::text) || '"}' END,
            CASE WHEN g.kind IN ('failed', 'retrying') THEN 'HTTP 502' END,
            g.at, g.at + interval '1 second'
       FROM g`,
    [appId, storeId, now, DASHBOARD_DELIVERIES, TOPICS, ORDER_BODY],
  );
  // Attempts: one per attempt_count; the earlier ones of a retried delivery failed.
  await db.query(
    `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error, app_id)
     SELECT d.id, k, d.created_at + (k - 1) * interval '1 minute', 40 + (hashtext(d.id::text || k) & 1023) % 400,
            CASE WHEN k = d.attempt_count AND d.status = 'success' THEN 200 WHEN k % 2 = 0 THEN NULL ELSE 502 END,
            CASE WHEN k = d.attempt_count AND d.status = 'success' THEN NULL WHEN k % 2 = 0 THEN 'timeout after 10000 ms' ELSE 'HTTP 502' END,
            d.app_id
       FROM webhook_deliveries d CROSS JOIN LATERAL generate_series(1, d.attempt_count) k
      WHERE d.app_id = $1`,
    [appId],
  );

  // Runs: the three functions in turn, 5 % failures; a handful of sealed tokens, as many runs share a checkout.
  const sealed = Array.from({ length: 50 }, (_, i) => deps.secrets.seal(`chk_bench_${String(i).padStart(4, '0')}_${'x'.repeat(32)}`));
  await db.query(
    `WITH g AS (SELECT g, $3::timestamptz - ($4::int - g) * (interval '${DAYS} days' / $4::int) AS at, 1 + g % 3 AS f FROM generate_series(1, $4::int) g)
     INSERT INTO function_runs (id, app_id, store_id, function_id, function_handle, target, status, error_type, error_message,
                                input, input_bytes, output, output_bytes, duration_ms, checkout_id, checkout_token_enc, created_at)
     SELECT gen_random_uuid(), $1, $2, ($5::uuid[])[g.f], ($6::text[])[g.f], 'cart.delivery-options.transform.run',
            CASE WHEN g.g % 20 = 0 THEN 'failure' ELSE 'success' END,
            CASE WHEN g.g % 20 = 0 THEN 'RuntimeError' END,
            CASE WHEN g.g % 20 = 0 THEN 'no such key: maxPrice' END,
            replace($7::text, '#N#', g.g::text)::jsonb, length(replace($7::text, '#N#', g.g::text)),
            CASE WHEN g.g % 20 = 0 THEN NULL ELSE $8::jsonb END, CASE WHEN g.g % 20 = 0 THEN 0 ELSE length($8::text) END,
            0.2 + (g.g % 37) / 10.0, gen_random_uuid(), ($9::text[])[1 + g.g % 50], g.at
       FROM g`,
    [appId, storeId, now, DASHBOARD_RUNS, fns.map((f) => f.id), fns.map((f) => f.handle), RUN_INPUT, RUN_OUTPUT, sealed],
  );

  // A live database's autovacuum would have visited tables that grew this much (as bench/orders.ts does).
  for (const table of ['webhook_deliveries', 'webhook_attempts', 'function_runs']) await db.exec(`VACUUM ANALYZE ${table}`);

  // What the single-item pages open: 200 of each, spread over the whole history.
  const { rows: deliveries } = await db.query<{ id: string }>(
    `SELECT id FROM (SELECT id, row_number() OVER (ORDER BY created_at DESC, id DESC) AS n FROM webhook_deliveries WHERE app_id = $1) x WHERE n % 50 = 1 ORDER BY n`,
    [appId],
  );
  const { rows: runs } = await db.query<{ id: string; function_handle: string }>(
    `SELECT id, function_handle FROM (SELECT id, function_handle, row_number() OVER (ORDER BY created_at DESC, id DESC) AS n FROM function_runs WHERE app_id = $1) x WHERE n % 50 = 1 ORDER BY n`,
    [appId],
  );
  const { rows: counts } = await db.query<{ deliveries: number; attempts: number; runs: number }>(
    `SELECT (SELECT count(*)::int FROM webhook_deliveries WHERE app_id = $1) AS deliveries,
            (SELECT count(*)::int FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.app_id = $1) AS attempts,
            (SELECT count(*)::int FROM function_runs WHERE app_id = $1) AS runs`,
    [appId],
  );
  if (counts[0].deliveries !== DASHBOARD_DELIVERIES || counts[0].runs !== DASHBOARD_RUNS) throw new Error(`dashboard data: ${JSON.stringify(counts[0])}`);
  return {
    appId, login: LOGIN,
    deliveryIds: deliveries.map((r) => r.id),
    runs: runs.map((r) => ({ handle: r.function_handle, runId: r.id })),
    deliveries: counts[0].deliveries, runCount: counts[0].runs,
  };
}

/** The dashboard's login, as a browser without script does it: the form's CSRF token and nonce cookie, then the session cookie. */
export async function dashboardSignIn(base: string, login: { email: string; password: string }): Promise<string> {
  const form = await fetch(`${base}/dashboard/login`);
  const html = await form.text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  const nonce = form.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('svc_login_nonce='));
  if (form.status !== 200 || !csrf || !nonce) throw new Error(`dashboard login form: ${form.status}, csrf ${!!csrf}, nonce cookie ${!!nonce}`);
  const res = await fetch(`${base}/dashboard/login`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: nonce },
    body: new URLSearchParams({ _csrf: csrf, email: login.email, password: login.password, next: '/dashboard/apps' }).toString(),
  });
  const session = res.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('svc_session='));
  if (res.status !== 303 || !session) throw new Error(`dashboard sign-in: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return session;
}

export interface DashboardPage {
  name: string;
  short: string;
  /** One path, or several taken in turn. */
  paths: string[];
  /** Text the page must contain (checked once before the load). */
  expect: string;
  /** The developer API's JSON, with the session's JWT as a bearer token (the same login), not a page. */
  api?: boolean;
}

export function dashboardPages(d: DashboardBenchData): DashboardPage[] {
  const app = `/dashboard/apps/${d.appId}`;
  const deepPage = Math.floor(d.deliveries / 25) - 5;
  return [
    { name: 'dash: deliveries, first page', short: 'dlv', paths: [`${app}/deliveries`], expect: 'Last 7 days' },
    { name: 'dash: deliveries, failed orders/create', short: 'dlv?f', paths: [`${app}/deliveries?status=failed&topic=${encodeURIComponent('orders/create')}`], expect: 'orders/create' },
    { name: `dash: deliveries, page ${deepPage} of ${d.deliveries / 25}`, short: 'dlv deep', paths: [`${app}/deliveries?page=${deepPage}`], expect: 'Last 7 days' },
    { name: `dash: one delivery (${d.deliveryIds.length} in turn)`, short: 'delivery', paths: d.deliveryIds.map((id) => `${app}/deliveries/${id}`), expect: 'Attempts' },
    { name: 'dash: function runs, first page', short: 'runs', paths: [`${app}/runs`], expect: 'rename-standard' },
    { name: 'dash: function runs, hide-dear failures', short: 'runs?f', paths: [`${app}/runs?function=hide-dear&status=failure`], expect: 'RuntimeError' },
    { name: `dash: one run (${d.runs.length} in turn)`, short: 'run', paths: d.runs.map((r) => `${app}/runs/${r.handle}/${r.runId}`), expect: 'deliveryOptions' },
    { name: 'dash: app overview', short: 'app', paths: [app], expect: 'Bench Dashboard App' },
    // The deliveries' stats: the dashboard's 7-day panel is part of every deliveries page above; the
    // stats of C8.6 (all deliveries by status) are the developer API's, opened with the same login.
    { name: 'deliveries stats (developer API, C8.6)', short: 'stats', paths: [`/apps/developer/${d.appId}/webhook-deliveries/stats`], expect: '"total":10000', api: true },
  ];
}

/** The session cookie for a page; its JWT as a bearer token for the developer API. */
export function dashboardHeaders(p: DashboardPage, cookie: string): Record<string, string> {
  return p.api ? { authorization: `Bearer ${cookie.slice(cookie.indexOf('=') + 1)}` } : { cookie };
}

/** Every page answers 200 with what it should show, before any load. */
export async function dashboardSanityCheck(base: string, cookie: string, pages: DashboardPage[]): Promise<void> {
  for (const p of pages) {
    for (const path of [p.paths[0], p.paths[p.paths.length - 1]]) {
      const res = await fetch(`${base}${path}`, { headers: dashboardHeaders(p, cookie), redirect: 'manual' });
      const html = await res.text();
      if (res.status !== 200) throw new Error(`${p.name} (${path}): ${res.status} ${html.slice(0, 300)}`);
      if (!html.includes(p.expect)) throw new Error(`${p.name} (${path}): the page lacks "${p.expect}"`);
    }
  }
}
