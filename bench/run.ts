// `npm run bench`: the App API's performance report against its targets.
//
//   1. Cold start: spawn the service on an empty embedded database (demo data on), time to /readyz 200.
//   2. Data: BENCH_STORES stores with BENCH_APPS enterprise-tier apps installed on each (real services,
//      in this process), five products each; then the service starts on that database (SVC_SEED=none).
//   3. Load (autocannon, in this process), tokens cycled. The service and the two floors (a bare
//      Fastify hello-world; Fastify + one primary-key SELECT on the same kind of database) are
//      started once and stay up; each scenario is measured INTERLEAVED with the floor it is compared
//      with (bench/series.ts): a warm-up of each, then BENCH_ROUNDS short rounds taken in turn,
//      A B, B A, A B, ... Figures are medians over the rounds; a ratio is the median of the per-round
//      ratios, printed with their range, so drift and leftover load land on both sides of it. A round
//      during which other work on the machine passes BENCH_QUIET cores is set aside and replaced.
//        products ?limit=1 (200)         with the pk-SELECT floor   (target >= 60 % of it)
//        files.json (404 after auth)     with the hello floor       (target >= 75 % of it)
//        order by id                     with the pk-SELECT floor   (target >= 60 % of it)
//        orders ?limit=50                alone: server CPU per request, with its baseline
//        products ?limit=50 (1k products) alone, or as part of catalog: server CPU per request, with its baseline
//        catalog: products ?limit=50 on 1k/10k/100k-product stores, in turn (100k within 20 % of 1k)
//        analytics: one request at a time
//        checkout shipping_rates, zones only, with the same from the rate cache (two shipping apps)
//                                        p99 < 10 ms; cached as fast as zones only; and the pk-SELECT
//                                        floor in the same rounds when `pk` is selected (context)
//        checkout shipping_rates asked of two shipping apps answering in 50 ms (never cached)
//                                        p99 <= the slower app + 15 ms; with the rate-proxy floor
//                                        (bench/floor-rate-proxy.ts: Fastify asking the same two
//                                        apps per request, nothing else) in the same rounds (context)
//        checkout complete               with POST /orders taking the same order (target >= 50 % of it)
//        checkout shipping_rates with three active delivery functions (issue 13)   p99 < 15 ms
//        dashboard (issue 15, bench/dashboard.ts): one developer app with 10,000 webhook deliveries and
//          10,000 function runs; signed in through the login form, each page alone with the session
//          cookie at BENCH_DASHBOARD_CONNECTIONS (default 1: a person opening pages, so latency is
//          the server's time, not a queue): deliveries (first, filtered, deep page), one delivery,
//          runs (first, filtered), one run, the app overview, and the deliveries stats (developer
//          API, same login)                p99 < 50 ms ("server time under 50 ms")
//      The processes not under load in a round are watched: their CPU is reported (they should idle).
//   4. Webhook fan-out (test/fixtures/webhook-bench.ts), with its own service and database.
//   5. Table, ratios and targets. Missing a target is reported, never an exit code.
//
// PGlite by default; with DATABASE_URL set, databases created for the run on that server (dropped at
// the end), one for the service and one for the pk-SELECT floor; when the server runs on this
// machine, its backends' CPU per request is reported too (db CPU), from /proc.
//
// Env (all optional):
//   BENCH_DURATION     seconds per measured round (default 3)
//   BENCH_ROUNDS       rounds per scenario, in turn with its floor (default 6)
//   BENCH_WARMUP       seconds of warm-up per scenario before its rounds, figures dropped (default 3)
//   BENCH_QUIET        other load on the machine (cores, beyond the bench's own processes, from /proc)
//                      above which a round is set aside and another one run, up to twice BENCH_ROUNDS
//                      (default 0.3; a large value keeps every round)
//   BENCH_CONNECTIONS  concurrent connections of the load (default 32)
//   BENCH_STORES       stores for products and files (default 150)
//   BENCH_APPS         enterprise apps installed on each of those stores (default 4). The rate limit is
//                      500 requests/s per (app, store) pair; STORES x APPS tokens, cycled, put the cap at
//                      500 x STORES x APPS requests/s (300,000 by default), far above any scenario here.
//                      The report prints each scenario's share of that cap; any 429 invalidates it.
//   BENCH_ORDERS       orders in the order scenarios' store (default 100000; bench/orders.ts)
//   BENCH_ONLY         a comma-separated subset of: products,files,hello,pk,order,orders,products50,analytics,
//                      catalog,rates,rates-apps,rates-functions,complete,dashboard,webhooks,functions (e.g. to profile one scenario). A scenario runs interleaved with
//                      its floor only when the floor is selected too; alone otherwise. `functions` (issue 13, bench/functions.ts)
//                      measures the function runner itself, before anything else starts; alone, it is all that runs.
//   BENCH_DASHBOARD_CONNECTIONS  concurrent connections of the dashboard pages' load (default 1)
//   BENCH_SKIP_COLD=1  no cold start
//   BENCH_PROFILE=1    --cpu-prof on the service; the report ends with where its CPU goes in each
//                      scenario (the samples of that scenario's rounds, by area and by function)
//   BENCH_PROFILE_TOP  lines per table of that report (default 8)
//   BENCH_KEEP=1       keep the temp dirs and scratch databases
//   BENCH_SERVICE_NODE_ARGS  extra node flags for the service process only (e.g. --max-semi-space-size=32)
//   DATABASE_URL       run on that PostgreSQL server instead of PGlite
//   REDIS_URL          passed to the service: the rate limiter in Redis
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { summarise } from './profile-summary.js';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, processCpu, startChild, stopAll, stopChild, waitReady, type Child } from './children.js';
import { BackendCpu, createDatabase, describeServer, dropDatabase } from './database.js';
import type { Round, Scenario, Watched } from './load.js';
import { measureGroup, over, roundRatios, spread, validityOf, type GroupOptions, type Series, type Spread } from './series.js';
import { serviceEnv, setupBenchData, type BenchTarget } from './setup-data.js';
import { runWebhookBench, type WebhookBenchResult } from '../test/fixtures/webhook-bench.js';
import { analyticsLatency, orderSanityCheck, BENCH_ORDER_APPS, type Latency } from './orders.js';
import { PRODUCT_SCALE_SIZES } from './products-scale.js';
import { RATE_APP_DELAY_MS, functionPoolStats } from './checkout.js';
import { dashboardHeaders, dashboardPages, dashboardSanityCheck, dashboardSignIn } from './dashboard.js';
import { printFunctionsFigures, printFunctionsTargets, runFunctionsBench, type FunctionsBenchResult } from './functions.js';

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

const ROUND_S = envNumber('BENCH_DURATION', 3);
const ROUNDS = Math.max(1, Math.round(envNumber('BENCH_ROUNDS', 6)));
const WARMUP_S = envNumber('BENCH_WARMUP', 3);
const QUIET_CORES = envNumber('BENCH_QUIET', 0.3);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 32);
const DASH_CONNECTIONS = Math.max(1, Math.round(envNumber('BENCH_DASHBOARD_CONNECTIONS', 1)));
const STORES = Math.max(1, envNumber('BENCH_STORES', 150));
const APPS = Math.max(1, Math.round(envNumber('BENCH_APPS', 4)));
const SKIP_COLD = process.env.BENCH_SKIP_COLD === '1';
const PROFILE = process.env.BENCH_PROFILE === '1';
const KEEP = process.env.BENCH_KEEP === '1';
/** Extra node flags for the service alone (V8 heap settings, say), whitespace-separated. */
const SERVICE_NODE_ARGS = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const SERVER_URL = process.env.DATABASE_URL?.trim() || null;
const SCENARIOS = ['products', 'files', 'hello', 'pk', 'order', 'orders', 'products50', 'analytics', 'catalog', 'rates', 'rates-apps', 'rates-functions', 'complete', 'dashboard', 'webhooks', 'functions'];
const ONLY = new Set((process.env.BENCH_ONLY?.trim() || SCENARIOS.join(',')).split(',').map((s) => s.trim()));
for (const s of ONLY) if (!SCENARIOS.includes(s)) throw new Error(`BENCH_ONLY: unknown scenario "${s}"`);
const ORDERS = ['order', 'orders', 'analytics'].some((s) => ONLY.has(s)) ? envNumber('BENCH_ORDERS', 100_000) : 0;
const CATALOG_SIZES = ONLY.has('catalog') ? PRODUCT_SCALE_SIZES : ONLY.has('products50') ? PRODUCT_SCALE_SIZES.slice(0, 1) : [];
/** The enterprise tier's requests per second per (app, store) pair (src/ratelimit/limiter.ts). */
const PAIR_LIMIT = 500;

const TARGETS = {
  productsVsPk: 0.6, orderVsPk: 0.6, notFoundVsHello: 0.75, productsP99Ms: 25, coldStartMs: 5000, analyticsMs: 300,
  catalogScaleDrop: 0.2, webhookDeliveriesPerSec: 1500, webhookP99Ms: 1000,
  ratesZonesP99Ms: 10, ratesAppsOverMs: 15, ratesCachedVsZones: 0.9, completeVsOrders: 0.5, ratesFunctionsP99Ms: 15,
  dashboardMs: 50,
};
/** Issue 11: server CPU per request before the work on it, on PostgreSQL (the service process alone). */
const CPU_BASELINES_US = { products50: 300, orders50: 690 };

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

const RATE_APPS = 'shipping apps';
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

// ---- 3. the service and the floors, kept up for the whole load section ---------------------------

async function startService(target: BenchTarget, profileDir: string | null): Promise<{ child: Child; base: string }> {
  const port = await freePort();
  const args = [...SERVICE_NODE_ARGS, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), '--import', 'tsx', MAIN];
  const child = startChild('service', args, childEnv({ ...serviceEnv(target), PORT: String(port) }), { cwd: ROOT });
  await waitReady(child, `http://127.0.0.1:${port}/readyz`, 120_000);
  return { child, base: `http://127.0.0.1:${port}` };
}

/** A floor server, started once; it idles (no timers) while the other scenarios run. */
async function startFloor(name: string, file: string, extra: Record<string, string>): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const child = startChild(name, ['--import', 'tsx', join(ROOT, 'bench', file)], childEnv({ PORT: String(port), ...extra }), { cwd: ROOT });
  await waitReady(child, `http://127.0.0.1:${port}/`, 60_000);
  return { child, url: `http://127.0.0.1:${port}/` };
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
    if (res.headers.get('x-ratelimit-limit') !== String(PAIR_LIMIT)) throw new Error(`token ${i}: X-RateLimit-Limit ${res.headers.get('x-ratelimit-limit')}, expected ${PAIR_LIMIT} (enterprise)`);
    await expect(`products with token ${i}`, res, 200, (b) =>
      b?.products?.length !== 1 ? 'expected exactly one product' : b.products[0].variants.length !== 2 ? 'expected the newest product to have 2 variants' : null);
  }
  const files = await fetch(`${base}/api/v1/files.json`, auth(tokens[0]));
  if (files.headers.get('x-ratelimit-limit') !== String(PAIR_LIMIT)) throw new Error('files.json did not pass the rate limiter');
  await expect('files.json', files, 404);
  await expect('products without a token', await fetch(`${base}/api/v1/products.json?limit=1`), 401);
  await expect('files.json without a token', await fetch(`${base}/api/v1/files.json`), 401);
}

// ---- 5. report ----------------------------------------------------------------------------------

const int = (x: number) => Math.round(x).toString();
const range = (s: Spread | null, f: (x: number) => string) => (s ? `${f(s.min)}-${f(s.max)}` : 'n/a');
const med = (s: Spread | null, f: (x: number) => string) => (s ? f(s.median) : 'n/a');
const pctRange = (s: Spread) => `[${(s.min * 100).toFixed(0)}-${(s.max * 100).toFixed(0)} %]`;

/** One row per series, grouped as measured (a floor row right under the scenario it was paired with). */
function table(groups: Series[][]) {
  const withDb = groups.some((g) => g.some((s) => s.rounds.some((r) => r.dbCpuUsPerReq !== null)));
  const head = ['scenario', 'rounds', 'req/s', 'min-max', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'responses', 'expected', 'unexpected', 'errors/timeouts', 'srv CPU us/req', 'min-max',
    ...(withDb ? ['db CPU us/req'] : []), 'srv/client CPU %', 'other load'];
  const body: string[][] = [];
  for (const group of groups) {
    for (const [i, s] of group.entries()) {
      const v = validityOf(s);
      const cpu = over(s, (r) => r.serverCpuUsPerReq);
      const srvPct = over(s, (r) => r.serverCpuPct), clientPct = over(s, (r) => r.clientCpuPct);
      body.push([
        (i > 0 && group.length === 2 ? '  ' : '') + s.scenario.name,
        `${s.rounds.length}${s.setAside.length ? ` (+${s.setAside.length})` : ''}${s.noisy ? ' NOISY' : ''}`,
        med(over(s, (r) => r.requestsPerSec), int),
        range(over(s, (r) => r.requestsPerSec), int),
        med(over(s, (r) => r.p50), (x) => x.toFixed(2)),
        med(over(s, (r) => r.p90), (x) => x.toFixed(2)),
        med(over(s, (r) => r.p99), (x) => x.toFixed(2)),
        Math.max(...s.rounds.map((r) => r.max)).toFixed(1),
        v.responses.toString(),
        `${s.scenario.expectStatus}`,
        v.unexpectedTotal ? Object.entries(v.unexpected).map(([k, n]) => `${k}x${n}`).join(' ') : '0',
        `${v.errors}/${v.timeouts}`,
        med(cpu, int),
        range(cpu, int),
        ...(withDb ? [med(over(s, (r) => r.dbCpuUsPerReq), int)] : []),
        `${med(srvPct, int)}/${med(clientPct, int)}`,
        med(over(s, (r) => r.otherLoadCores), (x) => x.toFixed(2)),
      ]);
    }
  }
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells: string[]) => '  ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(head));
  console.log('  ' + widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of body) console.log(line(row));
}

/**
 * Server CPU per request; on PostgreSQL, plus its backends' when the server is on this machine (the
 * whole cost of a request; null when it is not). A server with no database (hello) has none.
 */
function cpuPerRequest(r: Round, s: Series): number | null {
  if (r.serverCpuUsPerReq === null) return null;
  if (!SERVER_URL || !s.scenario.database) return r.serverCpuUsPerReq;
  return r.dbCpuUsPerReq === null ? null : r.serverCpuUsPerReq + r.dbCpuUsPerReq;
}

/** Cross-check less sensitive to other load on the machine: floor CPU per request / scenario's, per round. */
function cpuCheck(scenario: Series, floor: Series): string {
  const byCpu = roundRatios(floor, scenario, cpuPerRequest);
  if (!byCpu) return SERVER_URL ? '   [by CPU per request: n/a, the PostgreSQL server is not on this machine]' : '';
  return `   [by CPU per request${SERVER_URL ? ', service + its PostgreSQL backends' : ''}: ${pct(byCpu.median)} ${pctRange(byCpu)}]`;
}

function verdict(ok: boolean) {
  return ok ? 'met' : 'MISSED';
}

function ratioLine(label: string, scenario: Series | undefined, floor: Series | undefined, target: number) {
  if (!scenario || !floor) return;
  const r = roundRatios(scenario, floor, (x) => x.requestsPerSec);
  if (!r) return;
  const invalid = validityOf(scenario).unexpectedTotal || validityOf(floor).unexpectedTotal ? '  (INVALID: see the warnings)' : '';
  const noisy = scenario.noisy ? '  (NOISY: other load in most rounds)' : '';
  console.log(`  ${label.padEnd(38)} ${pct(r.median).padStart(5)} ${pctRange(r).padEnd(11)} (target >= ${pct(target)})  ${verdict(r.median >= target)}${cpuCheck(scenario, floor)}${invalid}${noisy}`);
}

function cpuTargetLine(label: string, s: Series | undefined, baselineUs: number) {
  if (!s) return;
  const cpu = over(s, (r) => r.serverCpuUsPerReq);
  if (!cpu) return;
  const change = cpu.median / baselineUs - 1;
  const note = SERVER_URL ? '' : '  (the baseline is on PostgreSQL; on PGlite the figure includes the database)';
  const db = SERVER_URL ? over(s, (r) => r.dbCpuUsPerReq) : null;
  const dbNote = db ? `; its PostgreSQL backends ${int(db.median)} us more` : '';
  console.log(`  ${label.padEnd(38)} ${int(cpu.median).padStart(5)} us [${range(cpu, int)}]  (baseline ${baselineUs} us: ${change >= 0 ? '+' : ''}${pct(change)})${dbNote}${note}`);
}

/**
 * BENCH_PROFILE=1: where the service's CPU goes in each scenario, from the samples of the main
 * thread's profile taken during that scenario's measured rounds (warm-ups and the other scenarios'
 * rounds left out): by area and by function.
 */
function whereTheTimeGoes(dir: string, series: Series[]) {
  const profiles = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f));
  if (!profiles.length) return;
  // The main thread's profile is the one with the most samples: the biggest file.
  const main = profiles.sort((a, b) => statSync(b).size - statSync(a).size)[0];
  console.log('\nWhere the service\'s CPU goes, scenario by scenario (main thread; BENCH_PROFILE=1)');
  for (const s of series) {
    const windows = s.rounds.map((r) => [r.startUs, r.endUs] as const);
    summarise(main, { windows, top: Number(process.env.BENCH_PROFILE_TOP ?? 8), tables: ['area', 'function'], title: `${s.scenario.name} (${s.rounds.length} rounds)` });
  }
}

/** Counter by counter, after minus before. */
function delta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
}

/** Issue 12's figures: rates p99s and the cache against zones only; completion against POST /orders. */
function checkoutTargets(s: { ratesZones?: Series; ratesCached?: Series; ratesApps?: Series; rateProxyFloor?: Series; ratesFunctions?: Series; complete?: Series; ordersCreate?: Series; pkWithRates?: Series; poolDuring?: Record<string, number> }) {
  const note = SERVER_URL ? '' : '  (the targets are for PostgreSQL; shown for reference)';
  const p99 = (x: Series) => over(x, (r) => r.p99)!;
  if (s.ratesFunctions) {
    const f = p99(s.ratesFunctions);
    console.log(`  ${`rates, 3 delivery functions, p99 @ ${CONNECTIONS}:`.padEnd(38)} ${f.median.toFixed(1).padStart(5)} ms [${range(f, (x) => x.toFixed(1))}]  (target < ${TARGETS.ratesFunctionsP99Ms} ms)  ${verdict(f.median < TARGETS.ratesFunctionsP99Ms)}${note}`);
    const p = s.poolDuring;
    if (p && p.runs) {
      const share = (n = 0) => `${n} (${((n / p.runs) * 100).toFixed(1)} %)`;
      const perTask = p.tasks ? `, ${(p.runs / p.tasks).toFixed(1)} a task sent to a worker` : '';
      console.log(`  ${'  function runs during it (warm-up too):'.padEnd(38)} ${p.runs}${perTask}; not run, pool saturated: ${share(p.saturated)}; stopped at 50 ms: ${share(p.timeouts)}`);
    }
  }
  if (s.ratesZones) {
    const z = p99(s.ratesZones);
    console.log(`  ${`checkout rates (zones) p99 @ ${CONNECTIONS}:`.padEnd(38)} ${z.median.toFixed(1).padStart(5)} ms [${range(z, (x) => x.toFixed(1))}]  (target < ${TARGETS.ratesZonesP99Ms} ms)  ${verdict(z.median < TARGETS.ratesZonesP99Ms)}${note}`);
    if (s.pkWithRates) {
      // Context, not a target: the bare pk SELECT behind Fastify, in the same rounds.
      const f = p99(s.pkWithRates);
      const r = roundRatios(s.ratesZones, s.pkWithRates, (x) => x.requestsPerSec);
      const share = r ? `; zones-only rates at ${pct(r.median)} ${pctRange(r)} of its throughput` : '';
      console.log(`  ${`  the pk-select floor's p99 @ ${CONNECTIONS}:`.padEnd(38)} ${f.median.toFixed(1).padStart(5)} ms [${range(f, (x) => x.toFixed(1))}]  (the same rounds${share})`);
    }
  }
  if (s.ratesCached && s.ratesZones) {
    const c = p99(s.ratesCached);
    console.log(`  ${'checkout rates from the cache p99:'.padEnd(38)} ${c.median.toFixed(1).padStart(5)} ms [${range(c, (x) => x.toFixed(1))}]`);
    ratioLine('checkout rates, cache vs zones only:', s.ratesCached, s.ratesZones, TARGETS.ratesCachedVsZones);
  }
  if (s.ratesApps) {
    const a = p99(s.ratesApps);
    const limit = RATE_APP_DELAY_MS + TARGETS.ratesAppsOverMs;
    console.log(`  ${`checkout rates, apps at ${RATE_APP_DELAY_MS} ms, p99:`.padEnd(38)} ${a.median.toFixed(1).padStart(5)} ms [${range(a, (x) => x.toFixed(1))}]  (target <= ${limit} ms: the slower app + ${TARGETS.ratesAppsOverMs} ms)  ${verdict(a.median <= limit)}${note}`);
    if (s.rateProxyFloor) {
      // Context, not a target: what this machine gives a bare two-request proxy, in the same rounds.
      const f = p99(s.rateProxyFloor);
      const apps = s.ratesApps.rounds, floor = s.rateProxyFloor.rounds;
      const added = spread(apps.slice(0, floor.length).map((r, i) => r.p99 - floor[i].p99));
      const addedText = added ? `; the quote's p99 ${added.median.toFixed(1)} ms [${range(added, (x) => x.toFixed(1))}] above it, round by round` : '';
      console.log(`  ${`  the rate-proxy floor's p99 @ ${CONNECTIONS}:`.padEnd(38)} ${f.median.toFixed(1).padStart(5)} ms [${range(f, (x) => x.toFixed(1))}]  (the same rounds; ${f.median <= limit ? 'within' : 'itself over'} the target${addedText})`);
    }
  }
  ratioLine('checkout complete vs POST /orders:', s.complete, s.ordersCreate, TARGETS.completeVsOrders);
}

/** Issue 15: each dashboard page's p99 against "server time under 50 ms", with its CPU per request. */
function dashboardTargets(pages: Series[]) {
  if (!pages.length) return;
  console.log(`  dashboard pages @ ${DASH_CONNECTIONS} connection(s), 10k deliveries and 10k runs (target: server time < ${TARGETS.dashboardMs} ms, read as p99 latency and as server CPU per request < ${TARGETS.dashboardMs} ms):`);
  for (const s of pages) {
    const p50 = over(s, (r) => r.p50)!, p99 = over(s, (r) => r.p99)!;
    const cpu = over(s, (r) => r.serverCpuUsPerReq);
    const db = SERVER_URL ? over(s, (r) => r.dbCpuUsPerReq) : null;
    // Server CPU per request (the service's, plus its PostgreSQL backends'): the server's own time,
    // which other load on the machine stretches less than it stretches latency.
    const cpuMs = cpu ? (cpu.median + (db?.median ?? 0)) / 1000 : null;
    const cpuText = cpu ? `CPU/req ${(cpu.median / 1000).toFixed(1)} ms${db ? ` + db ${(db.median / 1000).toFixed(1)} ms` : ''}` : 'CPU/req n/a';
    const noisy = s.noisy ? '  (NOISY)' : '';
    console.log(`    ${s.scenario.name.padEnd(44)} p50 ${p50.median.toFixed(1).padStart(5)} ms  p99 ${p99.median.toFixed(1).padStart(5)} ms [${range(p99, (x) => x.toFixed(1))}]  ${cpuText}   by p99: ${verdict(p99.median < TARGETS.dashboardMs)}, by CPU: ${cpuMs === null ? 'n/a' : verdict(cpuMs < TARGETS.dashboardMs)}${noisy}`);
  }
}

/**
 * The checkout scenarios answer as expected before any load; the cached checkouts get quoted once.
 * Returns the zones store's merchant JWT (logged in through the service), for `POST /orders`.
 */
async function checkoutSanityCheck(base: string, ck: NonNullable<Awaited<ReturnType<typeof setupBenchData>>['checkout']>): Promise<string> {
  const rates = async (slug: string, token: string) => {
    const res = await fetch(`${base}/storefront/${slug}/checkouts/${token}/shipping_rates`);
    const body = await res.json() as any;
    if (res.status !== 200) throw new Error(`shipping_rates: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    return body.data.shipping_rates as { source: string | null; title: string }[];
  };
  const zones = await rates(ck.zonesSlug, ck.zoneTokens[0]);
  if (zones.length !== 1 || zones[0].source !== null) throw new Error(`zones-only checkout: expected one zone rate, got ${JSON.stringify(zones)}`);
  for (const token of ck.cachedTokens) {
    const offered = await rates(ck.appsSlug, token);
    if (offered.filter((r) => r.source !== null).length !== 4) throw new Error(`apps checkout: expected 4 app rates, got ${JSON.stringify(offered)}`);
  }
  const shaped = await rates(ck.functionsSlug, ck.functionTokens[0]);
  if (shaped.length !== 1 || shaped[0].title !== 'Standard (tracked)') throw new Error(`functions checkout: expected the renamed zone rate, got ${JSON.stringify(shaped)}`);
  const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ck.merchantLogin) });
  const jwt = ((await login.json()) as any)?.data?.token;
  if (login.status !== 200 || !jwt) throw new Error(`merchant login: ${login.status}`);
  const order = await fetch(`${base}/orders`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` }, body: ck.orderBody });
  await expect('POST /orders', order, 201);
  return jwt;
}

// ---- main ---------------------------------------------------------------------------------------

async function main() {
  const kind = SERVER_URL ? 'PostgreSQL' : 'PGlite (embedded)';
  console.log(`App API benchmark on ${kind}`);
  console.log(`  node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load avg ${load()}`);
  if (SERVER_URL) console.log(`  server: ${await describeServer(SERVER_URL)}`);
  console.log(`  rate limiter: ${process.env.REDIS_URL ? 'Redis (REDIS_URL)' : 'memory'}; ${CONNECTIONS} connections; per scenario ${WARMUP_S} s warm-up + ${ROUNDS} rounds of ${ROUND_S} s, in turn with its floor`);

  // 0. Issue 13: the function runtime, on the runner itself (no service, no database), while the
  // machine is still quiet.
  let functions: FunctionsBenchResult | null = null;
  if (ONLY.has('functions')) {
    console.log('\n0. function runtime');
    functions = await runFunctionsBench();
    printFunctionsFigures(functions);
    if (ONLY.size === 1) {
      console.log('\nTargets');
      printFunctionsTargets(functions);
      return;
    }
  }

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
  const CHECKOUT = ['rates', 'rates-apps', 'rates-functions', 'complete'].some((x) => ONLY.has(x));
  const receiver = CHECKOUT ? await startFloor(RATE_APPS, 'rate-app.ts', { RATE_APP_DELAY_MS: String(RATE_APP_DELAY_MS) }) : null;
  if (receiver) cleanups.push(() => stopChild(receiver.child).then(() => {}));
  // Enough fresh checkouts that no request of the warm-up and the rounds (set-aside ones included)
  // has to reuse one: at most CONNECTIONS requests in flight, each taking at least the apps' delay.
  const loadSeconds = WARMUP_S + 2 * ROUNDS * ROUND_S;
  const checkoutCounts = CHECKOUT
    ? { uncached: ONLY.has('rates-apps') ? Math.ceil((loadSeconds * CONNECTIONS * 1000) / RATE_APP_DELAY_MS) : 0, complete: ONLY.has('complete') ? Math.ceil(loadSeconds * 800) : 0 }
    : null;
  const data = await setupBenchData(target, STORES, APPS, ORDERS, CATALOG_SIZES, receiver && checkoutCounts ? { ratesUrl: `${receiver.url}rates`, ...checkoutCounts } : null, ONLY.has('dashboard'));
  const extras = [
    ORDERS ? `one store with ${ORDERS} orders and ${BENCH_ORDER_APPS} apps` : '',
    CATALOG_SIZES.length ? `catalog stores of ${CATALOG_SIZES.join(', ')} products` : '',
    data.dashboard ? `a developer app with ${data.dashboard.deliveries} webhook deliveries and ${data.dashboard.runCount} function runs` : '',
    data.checkout ? `checkout stores with ${data.checkout.uncachedTokens.length + data.checkout.completeTokens.length + 400} checkouts` : '',
  ].filter(Boolean).join('; ');
  console.log(`  ${STORES} stores x ${APPS} apps (tier ${data.tier}) = ${data.tokens.length} tokens, 5 products each${extras ? `; ${extras}` : ''}: ${fmtMs(performance.now() - t0)}${target.databaseUrl ? ` (database ${new URL(target.databaseUrl).pathname.slice(1)})` : ` (${target.dataDir})`}`);

  // 3. The service and the floors, started once, up for the whole section.
  console.log('\n3. load');
  const profileDir = PROFILE ? mkdtempSync(join(tmpdir(), 'svc-bench-prof-')) : null;
  const service = await startService(target, profileDir);
  const serverPid = service.child.proc.pid;
  const serviceDb = target.databaseUrl ? new URL(target.databaseUrl).pathname.slice(1) : undefined;
  const floorDbUrl = SERVER_URL && ONLY.has('pk') ? await scratchDatabase('_floor') : null;
  const hello = ONLY.has('hello') ? await startFloor('floor: fastify hello', 'floor-hello.ts', {}) : null;
  const pk = ONLY.has('pk') ? await startFloor('floor: pk SELECT', 'floor-pk-select.ts', floorDbUrl ? { FLOOR_DATABASE_URL: floorDbUrl } : {}) : null;
  const watched: Watched[] = [{ name: 'service', pid: serverPid! }];
  if (hello) watched.push({ name: 'floor hello', pid: hello.child.proc.pid! });
  if (pk) watched.push({ name: 'floor pk', pid: pk.child.proc.pid! });
  // The apps' CPU is the bench's own, not other load on the machine (it works only in rates-apps).
  if (receiver) watched.push({ name: RATE_APPS, pid: receiver.child.proc.pid! });
  let backends: BackendCpu | null = null;
  if (SERVER_URL) {
    backends = await BackendCpu.open(SERVER_URL, processCpu);
    const probe = backends;
    cleanups.push(() => probe.close());
  }
  const groupOpts: GroupOptions = { connections: CONNECTIONS, rounds: ROUNDS, roundS: ROUND_S, warmupS: WARMUP_S, quietCores: QUIET_CORES, watched, backends };
  console.log(`  up: service (pid ${serverPid})${hello ? `, floor hello (pid ${hello.child.proc.pid})` : ''}${pk ? `, floor pk SELECT (pid ${pk.child.proc.pid}${floorDbUrl ? `, database ${new URL(floorDbUrl).pathname.slice(1)}` : ', its own PGlite'})` : ''}`);

  const headerSets = data.tokens.map((t) => ({ authorization: `Bearer ${t}` }));
  await sanityCheck(service.base, data.tokens);
  const od = data.orders;
  if (od) await orderSanityCheck(service.base, od);

  const pkName = `floor: pk SELECT (${SERVER_URL ? 'pg pool 10' : 'PGlite'})`;
  const pkScenario = (partner: string): Scenario | null =>
    pk ? { name: `${pkName}, with ${partner}`, short: 'pk', url: pk.url, expectStatus: 200, headerSets: [{}], serverPid: pk.child.proc.pid, database: floorDbUrl ? new URL(floorDbUrl).pathname.slice(1) : undefined } : null;
  const helloScenario = (partner: string): Scenario | null =>
    hello ? { name: `floor: fastify hello${partner ? `, with ${partner}` : ''}`, short: 'hello', url: hello.url, expectStatus: 200, headerSets: [{}], serverPid: hello.child.proc.pid } : null;
  const svc = (name: string, short: string, path: string, headers: Record<string, string>[], extra: Partial<Scenario> = {}): Scenario =>
    ({ name, short, url: `${service.base}${path}`, expectStatus: 200, headerSets: headers, serverPid, database: serviceDb, ...extra });

  // Each group: a scenario and the floor it is compared with (when both are selected), measured in turn.
  const groups: Series[][] = [];
  const run = async (...members: (Scenario | null)[]): Promise<Series[]> => {
    const list = members.filter((m): m is Scenario => m !== null);
    if (!list.length) return [];
    const series = await measureGroup(list, groupOpts);
    groups.push(series);
    return series;
  };

  const [products, pkWithProducts] = ONLY.has('products')
    ? await run(svc('products ?limit=1 (200)', 'products', '/api/v1/products.json?limit=1', headerSets), pkScenario('products'))
    : [];
  const [files, helloWithFiles] = ONLY.has('files')
    ? await run(svc('files.json (404 after auth)', 'files', '/api/v1/files.json', headerSets, { expectStatus: 404 }), helloScenario('files'))
    : [];
  const orderHeaders = od?.tokens.map((t) => ({ authorization: `Bearer ${t}` })) ?? [];
  const [order, pkWithOrder] = od && ONLY.has('order')
    ? await run(svc(`order by id (${od.count} orders)`, 'order', '/', orderHeaders, { paths: od.orderIds.map((id) => `/api/v1/orders/${id}.json`) }), pkScenario('order'))
    : [];
  // A floor selected without its scenario: measured alone.
  if (hello && !files) await run(helloScenario(''));
  if (pk && !products && !order && !(data.checkout && ONLY.has('rates'))) await run({ ...pkScenario('')!, name: pkName });
  const [orders] = od && ONLY.has('orders') ? await run(svc('orders ?limit=50', 'orders', '/api/v1/orders.json?limit=50', orderHeaders)) : [];
  // Issue 3: the product list page of 50 on stores of 1k, 10k and 100k products, in turn. Issue 11:
  // its server CPU per request on the 1k store (`products50`; taken from the catalog rounds when
  // they run).
  const catalogScenarios = (data.catalog ?? []).map((store) =>
    svc(`products ?limit=50 (${store.size} products)`, `${store.size / 1000}k`, '/api/v1/products.json?limit=50', store.tokens.map((t) => ({ authorization: `Bearer ${t}` }))));
  const catalog = catalogScenarios.length ? await run(...catalogScenarios) : [];
  const products50 = catalog[0];

  // Issue 12: the storefront checkout.
  const ck = data.checkout;
  const merchantJwt = ck ? await checkoutSanityCheck(service.base, ck) : null;
  const ratesPaths = (slug: string, tokens: string[]) => tokens.map((t) => `/storefront/${slug}/checkouts/${t}/shipping_rates`);
  // With the pk-SELECT floor when it is selected: on a slow machine the floor's own p99 tells
  // whether the < 10 ms target is within reach of any request that reads the database.
  const [ratesZones, ratesCached, pkWithRates] = ck && ONLY.has('rates')
    ? await run(
      svc('checkout rates, zones only', 'rates', '/', [{}], { paths: ratesPaths(ck.zonesSlug, ck.zoneTokens) }),
      svc('checkout rates, 2 apps, from cache', 'cached', '/', [{}], { paths: ratesPaths(ck.appsSlug, ck.cachedTokens) }),
      pkScenario('checkout rates'),
    )
    : [];
  // The pool's counters around the scenario: a run refused for saturation is a cheaper request,
  // so the figure holds only when (nearly) every function ran.
  const poolBefore = ck && ONLY.has('rates-functions') ? await functionPoolStats(service.base) : null;
  const [ratesFunctions] = ck && ONLY.has('rates-functions')
    ? await run(svc('checkout rates, zones + 3 delivery functions', 'ratesfn', '/', [{}], { paths: ratesPaths(ck.functionsSlug, ck.functionTokens) }))
    : [];
  const poolDuring = poolBefore ? delta(await functionPoolStats(service.base), poolBefore) : undefined;
  const rateProxy = ck && ONLY.has('rates-apps') && receiver ? await startFloor('floor: rate proxy', 'floor-rate-proxy.ts', { RATES_URL: `${receiver.url}rates` }) : null;
  const [ratesApps, rateProxyFloor] = ck && ONLY.has('rates-apps')
    ? await run(
      svc(`checkout rates, 2 apps answering in ${RATE_APP_DELAY_MS} ms`, 'apps', '/', [{}], { paths: ratesPaths(ck.appsSlug, ck.uncachedTokens), consumePaths: true }),
      rateProxy ? { name: `floor: 2 app requests per request, apps at ${RATE_APP_DELAY_MS} ms`, short: 'proxy', url: rateProxy.url, expectStatus: 200, headerSets: [{}], serverPid: rateProxy.child.proc.pid } : null,
    )
    : [];
  if (rateProxy) await stopChild(rateProxy.child);
  const [complete, ordersCreate] = ck && ONLY.has('complete')
    ? await run(
      svc('checkout complete', 'complete', '/', [{}], { method: 'POST', expectStatus: 201, consumePaths: true, paths: ck.completeTokens.map((t) => `/storefront/${ck.zonesSlug}/checkouts/${t}/complete`) }),
      svc('POST /orders, the same order', 'orders+', '/orders', [{ authorization: `Bearer ${merchantJwt}` }], { method: 'POST', expectStatus: 201, body: ck.orderBody }),
    )
    : [];

  // Issue 15: the dashboard's developer pages, each alone, signed in with the session cookie.
  const dashboard: Series[] = [];
  if (data.dashboard && ONLY.has('dashboard')) {
    const cookie = await dashboardSignIn(service.base, data.dashboard.login);
    const pages = dashboardPages(data.dashboard);
    await dashboardSanityCheck(service.base, cookie, pages);
    for (const p of pages) {
      const series = await measureGroup([svc(p.name, p.short, '/', [dashboardHeaders(p, cookie)], { paths: p.paths })], { ...groupOpts, connections: DASH_CONNECTIONS });
      groups.push(series);
      dashboard.push(series[0]);
    }
  }

  let analytics: (Latency & { orders: number }) | null = null;
  if (od && ONLY.has('analytics')) {
    analytics = await analyticsLatency(service.base, od.tokens);
    console.log(`  analytics last_90_days (${analytics.orders} orders in range), one at a time: p50 ${analytics.p50.toFixed(1)} ms, p95 ${analytics.p95.toFixed(1)} ms, max ${analytics.max.toFixed(1)} ms`);
  }

  for (const floor of [hello, pk]) if (floor) await stopChild(floor.child);
  const code = await stopChild(service.child);
  if (code !== 0) console.warn(`  warning: the service exited with code ${code} on SIGTERM:\n${service.child.output()}`);
  else if (service.child.output().trim()) console.log(`  service output:\n${service.child.output().split('\n').map((l) => '    ' + l).join('\n')}`);
  if (profileDir) {
    console.log(`  CPU profile of the service: ${profileDir} (node --import tsx bench/profile-summary.ts ${profileDir}/*.cpuprofile)`);
    whereTheTimeGoes(profileDir, groups.flat().filter((s) => s.scenario.serverPid === serverPid));
  }

  // 4. Issue 5: webhook fan-out, with its own service, receiver and database (test/fixtures/webhook-bench.ts).
  let webhooks: WebhookBenchResult | null = null;
  if (ONLY.has('webhooks')) {
    console.log('\n4. webhook fan-out');
    webhooks = await runWebhookBench(SERVER_URL);
  }

  // 5. Report.
  const all = groups.flat();
  console.log(`\nResults (${kind}; per scenario: medians over its ${ROUNDS} quiet rounds of ${ROUND_S} s and their range, (+n) rounds set aside for other load; load avg at end ${load()})`);
  if (all.length) table(groups);

  const invalid = all.filter((s) => {
    const v = validityOf(s);
    return v.unexpectedTotal || v.errors || v.timeouts;
  });
  for (const s of invalid) {
    const v = validityOf(s);
    const why = [
      v.unexpectedTotal ? `${v.unexpectedTotal} responses not ${s.scenario.expectStatus} (${Object.entries(v.unexpected).map(([k, n]) => `${k}: ${n}`).join(', ')})` : '',
      v.unexpected['429'] ? `${v.unexpected['429']} rate-limited (429)` : '',
      v.errors ? `${v.errors} errors` : '',
      v.timeouts ? `${v.timeouts} timeouts` : '',
    ].filter(Boolean);
    console.log(`  WARNING: "${s.scenario.name}" is INVALID (warm-up and rounds): ${why.join('; ')}`);
  }
  // How far the token-cycled scenarios are from the rate limiter's cap (the whole load spread evenly).
  for (const s of [products, files].filter((x): x is Series => !!x)) {
    const pairs = s.scenario.headerSets.length;
    const peak = Math.max(...s.rounds.map((r) => r.requestsPerSec));
    console.log(`  rate limit: "${s.scenario.name}" cycles ${pairs} (app, store) pairs, cap ${pairs * PAIR_LIMIT} req/s; its best round ${int(peak)} req/s (${pct(peak / (pairs * PAIR_LIMIT))} of the cap)`);
  }
  // The processes kept up must not compete while another one is measured.
  const rounds = all.flatMap((x) => [...x.rounds, ...x.setAside]);
  const idle = watched.filter((w) => w.name !== RATE_APPS).flatMap((w) => {
    const s = spread(rounds.flatMap((r) => (w.name in r.bystanderCpuPct ? [r.bystanderCpuPct[w.name]] : [])));
    return s ? [`${w.name} ${s.median.toFixed(1)} / ${s.max.toFixed(1)}`] : [];
  });
  if (idle.length) console.log(`  idle processes while another was measured (CPU, % of one core, median / max over rounds): ${idle.join(', ')}`);

  const otherLoad = spread(rounds.flatMap((r) => (r.otherLoadCores === null ? [] : [r.otherLoadCores])));
  if (otherLoad) {
    const setAside = all.reduce((n, x) => n + x.setAside.length, 0);
    const busy = all.some((x) => x.noisy) ? '; NOISY groups: too few quiet rounds, their figures are less trustworthy' : '';
    console.log(`  other load on the machine during the rounds (cores, beyond the bench's processes): median ${otherLoad.median.toFixed(2)}, max ${otherLoad.max.toFixed(2)}; ${setAside} scenario round(s) set aside (> ${QUIET_CORES})${busy}`);
  }

  console.log(`\nTargets (a ratio is the median of the per-round ratios over the quiet rounds, [their min-max]; each round pairs runs seconds apart)`);
  ratioLine('products ?limit=1 vs pk-select floor:', products, pkWithProducts, TARGETS.productsVsPk);
  ratioLine('order by id vs pk-select floor:', order, pkWithOrder, TARGETS.orderVsPk);
  ratioLine('404-after-auth vs hello floor:', files, helloWithFiles, TARGETS.notFoundVsHello);
  if (products) {
    const p99 = over(products, (r) => r.p99)!;
    const note = SERVER_URL ? '' : '  (the target is for PostgreSQL; shown for reference)';
    console.log(`  ${`products p99 @ ${CONNECTIONS} connections:`.padEnd(38)} ${p99.median.toFixed(1).padStart(5)} ms [${range(p99, (x) => x.toFixed(1))}]  (target < ${TARGETS.productsP99Ms} ms)  ${verdict(p99.median < TARGETS.productsP99Ms)}${note}`);
  }
  if (ONLY.has('products50')) cpuTargetLine(`products ?limit=50 (${CATALOG_SIZES[0]}) CPU/request:`, products50, CPU_BASELINES_US.products50);
  cpuTargetLine('orders ?limit=50 server CPU/request:', orders, CPU_BASELINES_US.orders50);
  if (analytics) {
    const note = SERVER_URL ? '' : '  (the target is for PostgreSQL; shown for reference)';
    console.log(`  ${'analytics last_90_days p95:'.padEnd(38)} ${analytics.p95.toFixed(1).padStart(5)} ms  (target < ${TARGETS.analyticsMs} ms)  ${verdict(analytics.p95 < TARGETS.analyticsMs)}${note}`);
  }
  if (catalog.length >= 2) {
    const small = catalog[0], large = catalog[catalog.length - 1];
    const kept = roundRatios(large, small, (r) => r.requestsPerSec)!;
    const drop = 1 - kept.median;
    const byCpu = roundRatios(small, large, cpuPerRequest);
    const cpuDrop = byCpu ? `   [by CPU per request: ${pct(1 - byCpu.median)}]` : '';
    const label = `products ?limit=50, ${CATALOG_SIZES[CATALOG_SIZES.length - 1]} vs ${CATALOG_SIZES[0]}:`;
    console.log(`  ${label.padEnd(38)} throughput ${drop > 0 ? 'falls' : 'rises'} ${pct(Math.abs(drop))} [kept ${pctRange(kept).slice(1, -1)}]  (target: falls <= ${pct(TARGETS.catalogScaleDrop)})  ${verdict(drop <= TARGETS.catalogScaleDrop)}${cpuDrop}`);
  }
  if (webhooks) {
    const note = SERVER_URL ? '' : '  (the targets are for PostgreSQL; shown for reference)';
    console.log(`  ${'webhook deliveries sustained:'.padEnd(38)} ${String(Math.round(webhooks.throughputPerSec)).padStart(5)} /s  (target >= ${TARGETS.webhookDeliveriesPerSec})  ${verdict(webhooks.throughputPerSec >= TARGETS.webhookDeliveriesPerSec)}${note}`);
    console.log(`  ${`webhook first-attempt p99 at ${webhooks.rate}/s:`.padEnd(38)} ${webhooks.latencyP99Ms.toFixed(0).padStart(5)} ms  (target < ${TARGETS.webhookP99Ms} ms)  ${verdict(webhooks.latencyP99Ms < TARGETS.webhookP99Ms)}${note}`);
  }
  checkoutTargets({ ratesZones, ratesCached, ratesApps, rateProxyFloor, ratesFunctions, complete, ordersCreate, pkWithRates, poolDuring });
  dashboardTargets(dashboard);
  if (functions) printFunctionsTargets(functions);
  if (cold) console.log(`  ${'cold start (empty embedded + demo):'.padEnd(38)} ${fmtMs(cold.ms).padStart(7)}  (target < ${fmtMs(TARGETS.coldStartMs)})  ${verdict(cold.ms < TARGETS.coldStartMs)}`);
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
