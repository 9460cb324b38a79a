// `npm run bench`: the App API's performance report against its targets.
//
//   1. Cold start: spawn the service on an empty embedded database (demo data on), time to /readyz 200.
//   2. Data: BENCH_STORES stores (default 150) with one enterprise-tier app installed (real services, in this process),
//      five products each; then the service starts on that database (SVC_SEED=none).
//   3. Load (autocannon, this process): products?limit=1 and files.json (404 after auth), tokens cycled.
//   4. Floors on the same machine: bare Fastify hello-world, Fastify + one primary-key SELECT.
//   5. Table and ratios against the targets. Missing a target is reported, never an exit code.
//
// PGlite by default; with DATABASE_URL set, a database created for the run on that server (dropped
// at the end). Env: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, 3), BENCH_CONNECTIONS (32),
// BENCH_STORES (150: at 500 requests/s per (app, store) pair the limiter then caps a scenario only above 75,000 requests/s, more than the hello floor), BENCH_SKIP_COLD=1, BENCH_PROFILE=1 (--cpu-prof on the service), BENCH_KEEP=1,
// BENCH_ONLY=products,files,hello,pk,order,orders,analytics,catalog,webhooks (a subset of the scenarios, e.g. to profile
// one of them). The order scenarios (bench/orders.ts) run on one store with BENCH_ORDERS orders (100000).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startChild, stopAll, stopChild, waitReady, type Child } from './children.js';
import { createDatabase, describeServer, dropDatabase } from './database.js';
import { runScenario, type LoadOptions, type LoadResult, type Scenario } from './load.js';
import { serviceEnv, setupBenchData, type BenchTarget } from './setup-data.js';
import { runWebhookBench, type WebhookBenchResult } from '../test/fixtures/webhook-bench.js';
import { analyticsLatency, orderSanityCheck, BENCH_ORDER_APPS, type Latency } from './orders.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'src/main.ts');
const SECRET = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!(n >= 0)) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return n;
}

const DURATION_S = envNumber('BENCH_DURATION', 10);
const WARMUP_S = envNumber('BENCH_WARMUP', 3);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 32);
const STORES = envNumber('BENCH_STORES', 150);
const SKIP_COLD = process.env.BENCH_SKIP_COLD === '1';
const PROFILE = process.env.BENCH_PROFILE === '1';
const KEEP = process.env.BENCH_KEEP === '1';
const SERVER_URL = process.env.DATABASE_URL?.trim() || null;
const SCENARIOS = ['products', 'files', 'hello', 'pk', 'order', 'orders', 'analytics', 'catalog', 'webhooks'];
const ONLY = new Set((process.env.BENCH_ONLY?.trim() || SCENARIOS.join(',')).split(',').map((s) => s.trim()));
for (const s of ONLY) if (!SCENARIOS.includes(s)) throw new Error(`BENCH_ONLY: unknown scenario "${s}"`);
const ORDERS = ['order', 'orders', 'analytics'].some((s) => ONLY.has(s)) ? envNumber('BENCH_ORDERS', 100_000) : 0;

const TARGETS = { catalogScaleDrop: 0.2, webhookDeliveriesPerSec: 1500, webhookP99Ms: 1000, productsVsPk: 0.5, notFoundVsHello: 0.5, productsP99Ms: 25, coldStartMs: 5000, orderVsPk: 0.5, analyticsMs: 300 };

// ---- clean-up: children, temp dirs, scratch databases; on every exit path --------------------

const cleanups: (() => Promise<void> | void)[] = [];
let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll();
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        console.error('clean-up step failed:', err);
      }
    }
  })();
  return cleaning;
}
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping children and cleaning up...`);
    void cleanup().finally(() => process.exit(code));
  });
}

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (!KEEP) cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function scratchDatabase(suffix: string): Promise<string> {
  const name = `svc_bench_${Date.now().toString(36)}_${process.pid}${suffix}`;
  const url = await createDatabase(SERVER_URL!, name);
  if (!KEEP) cleanups.push(() => dropDatabase(SERVER_URL!, name));
  return url;
}

/** The environment of every child: ours, minus anything that configures the service. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(SVC_|BENCH_)/.test(k) || ['DATABASE_URL', 'PORT', 'HOST', 'LOG_LEVEL', 'NODE_ENV', 'SMTP_URL'].includes(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

const fmtMs = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);
const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

// ---- 1. cold start ----------------------------------------------------------------------------

async function coldStart(label: string, extra: Record<string, string>): Promise<{ ms: number; demo: boolean }> {
  const dir = tempDir('svc-bench-cold-');
  const port = await freePort();
  // SVC_SEED unset: an empty database in development gets the demo data on its first start.
  const env = childEnv({ NODE_ENV: 'development', SVC_DATA_DIR: dir, SVC_SECRET: SECRET, LOG_LEVEL: 'warn', PORT: String(port), ...extra });
  const child = startChild(`cold start (${label})`, ['--import', 'tsx', MAIN], env, { cwd: ROOT });
  const ms = await waitReady(child, `http://127.0.0.1:${port}/readyz`, 120_000);
  // The banner is printed right after listen(); give it a moment to arrive.
  for (let i = 0; i < 100 && !child.output().includes('Demo store'); i++) await new Promise((r) => setTimeout(r, 20));
  const demo = child.output().includes('Demo store');
  const code = await stopChild(child);
  if (code !== 0) console.warn(`  warning: ${child.name} exited with code ${code} on SIGTERM:\n${child.output()}`);
  return { ms, demo };
}

// ---- 3. the service under load ------------------------------------------------------------------

async function startService(target: BenchTarget, profileDir: string | null): Promise<{ child: Child; base: string }> {
  const port = await freePort();
  const args = [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), '--import', 'tsx', MAIN];
  const child = startChild('service', args, childEnv({ ...serviceEnv(target), PORT: String(port) }), { cwd: ROOT });
  await waitReady(child, `http://127.0.0.1:${port}/readyz`, 120_000);
  return { child, base: `http://127.0.0.1:${port}` };
}

async function expect(what: string, res: Response, status: number, check?: (body: any) => string | null) {
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${text.slice(0, 300)}`);
  const problem = check?.(text ? JSON.parse(text) : null);
  if (problem) throw new Error(`${what}: ${problem}: ${text.slice(0, 300)}`);
}

/** Before any load: every token works, the gate is real, and the scenarios answer what we expect. */
async function sanityCheck(base: string, tokens: string[]) {
  const auth = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });
  for (const [i, token] of tokens.entries()) {
    const res = await fetch(`${base}/api/v1/products.json?limit=1`, auth(token));
    if (res.headers.get('x-ratelimit-limit') !== '500') throw new Error(`token ${i}: X-RateLimit-Limit ${res.headers.get('x-ratelimit-limit')}, expected 500 (enterprise)`);
    await expect(`products with token ${i}`, res, 200, (b) =>
      b?.products?.length !== 1 ? 'expected exactly one product' : b.products[0].variants.length !== 2 ? 'expected the newest product to have 2 variants' : null);
  }
  const files = await fetch(`${base}/api/v1/files.json`, auth(tokens[0]));
  if (files.headers.get('x-ratelimit-limit') !== '500') throw new Error('files.json did not pass the rate limiter');
  await expect('files.json', files, 404);
  await expect('products without a token', await fetch(`${base}/api/v1/products.json?limit=1`), 401);
  await expect('files.json without a token', await fetch(`${base}/api/v1/files.json`), 401);
}

// ---- 4. floors ----------------------------------------------------------------------------------

async function floor(name: string, file: string, extra: Record<string, string>, opts: LoadOptions): Promise<LoadResult> {
  const port = await freePort();
  const child = startChild(name, ['--import', 'tsx', join(ROOT, 'bench', file)], childEnv({ PORT: String(port), ...extra }), { cwd: ROOT });
  try {
    await waitReady(child, `http://127.0.0.1:${port}/`, 60_000);
    return await measure({ name, url: `http://127.0.0.1:${port}/`, expectStatus: 200, headerSets: [{}], serverPid: child.proc.pid }, opts);
  } finally {
    await stopChild(child);
  }
}

async function measure(scenario: Scenario, opts: LoadOptions): Promise<LoadResult> {
  process.stdout.write(`  ${scenario.name}: ${opts.warmupS} s warm-up + ${opts.durationS} s, ${opts.connections} connections (load avg ${load()}) ... `);
  const r = await runScenario(scenario, opts);
  console.log(`${Math.round(r.requestsPerSec)} req/s`);
  return r;
}

// ---- 5. report ----------------------------------------------------------------------------------

function table(rows: LoadResult[]) {
  const head = ['scenario', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'responses', 'expected', 'unexpected', 'errors/timeouts', 'srv CPU us/req', 'srv/client CPU %'];
  const body = rows.map((r) => [
    r.name,
    Math.round(r.requestsPerSec).toString(),
    r.p50.toFixed(2),
    r.p90.toFixed(2),
    r.p99.toFixed(2),
    r.max.toFixed(1),
    r.total.toString(),
    `${r.expectStatus}`,
    r.unexpectedTotal ? Object.entries(r.unexpected).map(([s, n]) => `${s}x${n}`).join(' ') : '0',
    `${r.errors}/${r.timeouts}`,
    r.serverCpuUsPerReq === null ? 'n/a' : r.serverCpuUsPerReq.toFixed(0),
    `${r.serverCpuPct === null ? 'n/a' : r.serverCpuPct.toFixed(0)}/${r.clientCpuPct.toFixed(0)}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells: string[]) => '  ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(head));
  console.log('  ' + widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of body) console.log(line(row));
}

/** Cross-check less sensitive to other load on the machine: floor CPU per request / scenario's. */
function cpuCheck(scenario: LoadResult, floor: LoadResult): string {
  if (!scenario.serverCpuUsPerReq || !floor.serverCpuUsPerReq) return '';
  const db = SERVER_URL ? ', PostgreSQL server CPU not counted' : '';
  return `   [by server CPU per request: ${pct(floor.serverCpuUsPerReq / scenario.serverCpuUsPerReq)}${db}]`;
}

function verdict(ok: boolean) {
  return ok ? 'met' : 'MISSED';
}

// ---- main ---------------------------------------------------------------------------------------

async function main() {
  const kind = SERVER_URL ? 'PostgreSQL' : 'PGlite (embedded)';
  console.log(`App API benchmark on ${kind}`);
  console.log(`  node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load avg ${load()}`);
  if (SERVER_URL) console.log(`  server: ${await describeServer(SERVER_URL)}`);
  console.log(`  rate limiter: ${process.env.REDIS_URL ? 'Redis (REDIS_URL)' : 'memory'}; ${CONNECTIONS} connections; ${WARMUP_S} s warm-up + ${DURATION_S} s per scenario`);

  // 1. Cold start on an empty embedded database with the demo data (the first-run experience).
  let cold: { ms: number; demo: boolean } | null = null;
  let coldPg: { ms: number; demo: boolean } | null = null;
  if (!SKIP_COLD) {
    console.log('\n1. cold start');
    cold = await coldStart('embedded, empty, demo data', {});
    console.log(`  empty embedded database + demo data: ${fmtMs(cold.ms)} spawn -> /readyz 200 (target < ${fmtMs(TARGETS.coldStartMs)})${cold.demo ? '' : '  [demo banner NOT seen]'}`);
    if (SERVER_URL) {
      coldPg = await coldStart('PostgreSQL, empty, demo data', { DATABASE_URL: await scratchDatabase('_cold') });
      console.log(`  empty PostgreSQL database + demo data: ${fmtMs(coldPg.ms)} (for reference)${coldPg.demo ? '' : '  [demo banner NOT seen]'}`);
    }
  }

  // 2. Data, written before the server starts.
  console.log('\n2. data');
  const target: BenchTarget = {
    dataDir: tempDir('svc-bench-data-'),
    databaseUrl: SERVER_URL ? await scratchDatabase('') : null,
    secret: SECRET,
  };
  const t0 = performance.now();
  const data = await setupBenchData(target, STORES, ORDERS, ONLY.has('catalog'));
  console.log(`  ${STORES} stores, app tier ${data.tier}, 5 products each${ORDERS ? `; one store with ${ORDERS} orders and ${BENCH_ORDER_APPS} apps` : ''}: ${fmtMs(performance.now() - t0)}${target.databaseUrl ? ` (database ${new URL(target.databaseUrl).pathname.slice(1)})` : ` (${target.dataDir})`}`);

  // 3. The service under load.
  console.log('\n3. service');
  const opts: LoadOptions = { connections: CONNECTIONS, durationS: DURATION_S, warmupS: WARMUP_S };
  const profileDir = PROFILE ? mkdtempSync(join(tmpdir(), 'svc-bench-prof-')) : null;
  const service = await startService(target, profileDir);
  const headerSets = data.tokens.map((t) => ({ authorization: `Bearer ${t}` }));
  const serverPid = service.child.proc.pid;
  await sanityCheck(service.base, data.tokens);
  const products = ONLY.has('products')
    ? await measure({ name: 'products ?limit=1 (200)', url: `${service.base}/api/v1/products.json?limit=1`, expectStatus: 200, headerSets, serverPid }, opts)
    : null;
  const files = ONLY.has('files')
    ? await measure({ name: 'files.json (404 after auth)', url: `${service.base}/api/v1/files.json`, expectStatus: 404, headerSets, serverPid }, opts)
    : null;
  const od = data.orders;
  if (od) await orderSanityCheck(service.base, od);
  const orderHeaders = od?.tokens.map((t) => ({ authorization: `Bearer ${t}` })) ?? [];
  const order = od && ONLY.has('order')
    ? await measure({ name: `order by id (${od.count} orders)`, url: service.base, paths: od.orderIds.map((id) => `/api/v1/orders/${id}.json`), expectStatus: 200, headerSets: orderHeaders, serverPid }, opts)
    : null;
  const orders = od && ONLY.has('orders')
    ? await measure({ name: 'orders ?limit=50', url: `${service.base}/api/v1/orders.json?limit=50`, expectStatus: 200, headerSets: orderHeaders, serverPid }, opts)
    : null;
  // Issue 3: the product list page of 50 on stores of 1k, 10k and 100k products.
  const catalog: LoadResult[] = [];
  for (const store of data.catalog ?? []) {
    const headers = store.tokens.map((t) => ({ authorization: `Bearer ${t}` }));
    catalog.push(await measure({ name: `products ?limit=50 (${store.size} products)`, url: `${service.base}/api/v1/products.json?limit=50`, expectStatus: 200, headerSets: headers, serverPid }, opts));
  }
  let analytics: (Latency & { orders: number }) | null = null;
  if (od && ONLY.has('analytics')) {
    analytics = await analyticsLatency(service.base, od.tokens);
    console.log(`  analytics last_90_days (${analytics.orders} orders in range), one at a time: p50 ${analytics.p50.toFixed(1)} ms, p95 ${analytics.p95.toFixed(1)} ms, max ${analytics.max.toFixed(1)} ms`);
  }
  const code = await stopChild(service.child);
  if (code !== 0) console.warn(`  warning: the service exited with code ${code} on SIGTERM:\n${service.child.output()}`);
  else if (service.child.output().trim()) console.log(`  service output:\n${service.child.output().split('\n').map((l) => '    ' + l).join('\n')}`);
  if (profileDir) console.log(`  CPU profile of the service: ${profileDir} (node --import tsx bench/profile-summary.ts ${profileDir}/*.cpuprofile)`);

  // Issue 5: webhook fan-out, with its own service, receiver and database (bench/webhooks.ts).
  let webhooks: WebhookBenchResult | null = null;
  if (ONLY.has('webhooks')) {
    console.log('\n  webhook fan-out');
    webhooks = await runWebhookBench(SERVER_URL);
  }

  // 4. Floors.
  console.log('\n4. floors');
  const hello = ONLY.has('hello') ? await floor('floor: fastify hello', 'floor-hello.ts', {}, opts) : null;
  const pk = ONLY.has('pk')
    ? await floor(`floor: fastify + pk SELECT (${SERVER_URL ? 'pg pool 10' : 'PGlite'})`, 'floor-pk-select.ts', target.databaseUrl ? { FLOOR_DATABASE_URL: target.databaseUrl } : {}, opts)
    : null;

  // 5. Report.
  console.log(`\nResults (${kind}; load avg at end ${load()})`);
  const all = [products, ...catalog, order, orders, pk, files, hello].filter((r): r is LoadResult => r !== null);
  table(all);

  const invalid = all.filter((r) => r.unexpectedTotal || r.errors || r.timeouts);
  for (const r of invalid) {
    const why = [
      r.unexpectedTotal ? `${r.unexpectedTotal} responses not ${r.expectStatus} (${Object.entries(r.unexpected).map(([s, n]) => `${s}: ${n}`).join(', ')})` : '',
      r.status429 ? `${r.status429} rate-limited (429)` : '',
      r.errors ? `${r.errors} errors` : '',
      r.timeouts ? `${r.timeouts} timeouts` : '',
    ].filter(Boolean);
    console.log(`  WARNING: "${r.name}" is INVALID: ${why.join('; ')}`);
  }

  console.log('\nTargets');
  if (products && pk) {
    const ratio = products.requestsPerSec / pk.requestsPerSec;
    console.log(`  products vs pk-select floor:     ${pct(ratio).padStart(6)}  (target >= ${pct(TARGETS.productsVsPk)})  ${verdict(ratio >= TARGETS.productsVsPk)}${cpuCheck(products, pk)}`);
  }
  if (files && hello) {
    const ratio = files.requestsPerSec / hello.requestsPerSec;
    console.log(`  404-after-auth vs hello floor:   ${pct(ratio).padStart(6)}  (target >= ${pct(TARGETS.notFoundVsHello)})  ${verdict(ratio >= TARGETS.notFoundVsHello)}${cpuCheck(files, hello)}`);
  }
  if (products) {
    const note = SERVER_URL ? '' : '  (the target is for PostgreSQL; shown for reference)';
    console.log(`  products p99 @ ${CONNECTIONS} connections: ${products.p99.toFixed(1).padStart(5)} ms  (target < ${TARGETS.productsP99Ms} ms)  ${verdict(products.p99 < TARGETS.productsP99Ms)}${note}`);
  }
  if (order && pk) {
    const ratio = order.requestsPerSec / pk.requestsPerSec;
    console.log(`  order by id vs pk-select floor:  ${pct(ratio).padStart(6)}  (target >= ${pct(TARGETS.orderVsPk)})  ${verdict(ratio >= TARGETS.orderVsPk)}${cpuCheck(order, pk)}`);
  }
  if (analytics) {
    const note = SERVER_URL ? '' : '  (the target is for PostgreSQL; shown for reference)';
    console.log(`  analytics last_90_days p95:      ${analytics.p95.toFixed(1).padStart(5)} ms  (target < ${TARGETS.analyticsMs} ms)  ${verdict(analytics.p95 < TARGETS.analyticsMs)}${note}`);
  }
  if (catalog.length >= 2) {
    const small = catalog[0], large = catalog[catalog.length - 1];
    const drop = 1 - large.requestsPerSec / small.requestsPerSec;
    const cpuDrop = small.serverCpuUsPerReq && large.serverCpuUsPerReq ? `   [by server CPU per request: ${pct(1 - small.serverCpuUsPerReq / large.serverCpuUsPerReq)}]` : '';
    const sizes = data.catalog!;
    console.log(`  products ?limit=50, ${sizes[sizes.length - 1].size} vs ${sizes[0].size} products: throughput ${drop > 0 ? 'falls' : 'rises'} ${pct(Math.abs(drop))}  (target: falls <= ${pct(TARGETS.catalogScaleDrop)})  ${verdict(drop <= TARGETS.catalogScaleDrop)}${cpuDrop}`);
  }
  if (webhooks) {
    const note = SERVER_URL ? '' : '  (the targets are for PostgreSQL; shown for reference)';
    console.log(`  webhook deliveries sustained:    ${String(Math.round(webhooks.throughputPerSec)).padStart(5)} /s  (target >= ${TARGETS.webhookDeliveriesPerSec})  ${verdict(webhooks.throughputPerSec >= TARGETS.webhookDeliveriesPerSec)}${note}`);
    console.log(`  webhook first-attempt p99 at ${webhooks.rate} events/s: ${webhooks.latencyP99Ms.toFixed(0)} ms  (target < ${TARGETS.webhookP99Ms} ms)  ${verdict(webhooks.latencyP99Ms < TARGETS.webhookP99Ms)}${note}`);
  }
  if (cold) console.log(`  cold start (empty embedded + demo): ${fmtMs(cold.ms).padStart(7)}  (target < ${fmtMs(TARGETS.coldStartMs)})  ${verdict(cold.ms < TARGETS.coldStartMs)}`);
  if (invalid.length) console.log(`  (${invalid.length} scenario(s) invalid: see the warnings above; their figures do not count)`);
}

let exitCode = 0;
try {
  await main();
} catch (err) {
  console.error('\nbenchmark failed:', err);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
