// One load run with autocannon, in this process: a warm-up whose figures are dropped, or one
// measured round. Latency percentiles are computed here from every response's exact time
// (autocannon's own histogram has 1 ms resolution, too coarse for a hello-world floor). Around a
// round the CPU time of the server under load, of its PostgreSQL backends (when the server runs on
// this machine) and of the other processes the bench keeps alive (which should be idle) is read.
import autocannon from 'autocannon';
import { cpuTimeMs, machineBusyMs } from './children.js';
import { backendCpuBetween, type BackendCpu } from './database.js';

export interface Scenario {
  name: string;
  /** A short name for progress lines (e.g. "products", "pk"). */
  short: string;
  url: string;
  /** Status every response must have (anything else is counted and invalidates the run). */
  expectStatus: number;
  /** Request headers cycled through per connection (one entry per token); `[{}]` for none. */
  headerSets: Record<string, string>[];
  /** The server's pid, to measure the CPU time it spends per request. */
  serverPid?: number;
  /** Paths (with query) cycled through instead of the URL's own, entry i with header set i mod n. */
  paths?: string[];
  /** The PostgreSQL database the server queries, to count its backends' CPU (unset on PGlite). */
  database?: string;
  /** GET unless given; a POST's JSON body. */
  method?: 'GET' | 'POST';
  body?: string;
  /**
   * The paths are used up rather than cycled per connection: every request, from any connection,
   * takes the next one, across the warm-up and every round (each checkout completed once, each rate
   * request new). Past the end they wrap around.
   */
  consumePaths?: boolean;
}

/** Where a `consumePaths` scenario has got to, across its runs. */
const cursors = new WeakMap<Scenario, { next: number }>();

/** A process kept alive by the bench, watched while another one is under load. */
export interface Watched {
  name: string;
  pid: number;
}

export interface RoundOptions {
  connections: number;
  durationS: number;
  /** Processes that should be idle during this round; their CPU is reported. */
  bystanders: Watched[];
  /** Reads the PostgreSQL backends' CPU (null on PGlite). */
  backends: BackendCpu | null;
}

/** Answers that invalidate a run: a status other than the expected one, socket errors, timeouts. */
export interface Validity {
  unexpected: Record<string, number>;
  unexpectedTotal: number;
  errors: number;
  timeouts: number;
}

export interface Round extends Validity {
  requestsPerSec: number;
  total: number;
  durationS: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** When the round ran, on the monotonic clock every process shares (µs): to find its samples in a CPU profile. */
  startUs: number;
  endUs: number;
  /** Server process CPU time per response (µs) and its share of one core during the round (%). */
  serverCpuUsPerReq: number | null;
  serverCpuPct: number | null;
  /** CPU time of the server's PostgreSQL backends per response (µs); null on PGlite or a remote server. */
  dbCpuUsPerReq: number | null;
  /** The same for this (load-generating) process. */
  clientCpuPct: number;
  /** CPU of the watched bystanders during the round, % of one core, by name. */
  bystanderCpuPct: Record<string, number>;
  /**
   * Other load on the machine during the round, in cores: the machine's busy CPU time less that of
   * the server, its backends, the bystanders and this process (null where /proc is missing).
   */
  otherLoadCores: number | null;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** One request that takes the scenario's next path each time any connection sends it. */
function consumingRequest(scenario: Scenario) {
  const paths = scenario.paths ?? [];
  if (!paths.length) throw new Error(`${scenario.name}: consumePaths needs paths`);
  let cursor = cursors.get(scenario);
  if (!cursor) cursors.set(scenario, (cursor = { next: 0 }));
  const at = cursor;
  return {
    method: scenario.method ?? 'GET',
    setupRequest: (req: Record<string, unknown>) => {
      const i = at.next++;
      return { ...req, path: paths[i % paths.length], headers: { ...scenario.headerSets[i % scenario.headerSets.length], ...(scenario.body ? { 'content-type': 'application/json' } : {}) }, body: scenario.body };
    },
  };
}

/**
 * Each connection's own share of the scenario's paths (their indexes; path j keeps header set j):
 * connection i takes paths i, i + n, i + 2n, ...
 * (with fewer paths than connections, path i mod their number), so 32 connections quote 32
 * different checkouts at once, as 32 buyers would, and each walks its share in a loop.
 *
 * Why per connection: autocannon builds every request of its list once per connection, inside the
 * constructor that has already sent that connection's first request; with 200 paths and 32
 * connections that was 6,400 request builds (120-180 ms) between the first connections' first
 * requests and the moment the load generator could read their answers. docs/decisions.md,
 * "Benchmark method".
 */
function pathsOfConnection(paths: number, connections: number, i: number): number[] {
  if (paths <= connections) return [i % paths];
  const own: number[] = [];
  for (let j = i; j < paths; j += connections) own.push(j);
  return own;
}

/** A response's latency, and whether its request was sent once the load generator had started (see runOnce). */
type OnResponse = (ms: number, sentAfterStart: boolean) => void;

function runOnce(scenario: Scenario, opts: { connections: number; durationS: number }, onResponse?: OnResponse): Promise<autocannon.Result> {
  const url = new URL(scenario.url);
  const method = scenario.method ?? 'GET';
  const headersOf = (i: number) => ({ ...scenario.headerSets[i % scenario.headerSets.length], ...(scenario.body ? { 'content-type': 'application/json' } : {}) });
  const requestOf = (path: string, i: number) => ({ method, path, headers: headersOf(i), body: scenario.body });
  const staticPaths = !scenario.consumePaths && scenario.paths && scenario.paths.length > 1 ? scenario.paths : null;
  let nextConnection = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: url.origin,
        connections: opts.connections,
        pipelining: 1,
        duration: opts.durationS,
        timeout: 10,
        // Static requests, built once: each connection walks its list, one token per request.
        requests: scenario.consumePaths ? [consumingRequest(scenario)] : scenario.paths
          ? staticPaths
            ? [requestOf(staticPaths[0], 0)]
            : scenario.paths.map((path, i) => requestOf(path, i))
          : scenario.headerSets.map((_headers, i) => requestOf(url.pathname + url.search, i)),
        // Runs in each connection's constructor before its first request: its own share of the paths.
        ...(staticPaths
          ? {
              setupClient: (client: { setRequests(requests: unknown[]): void }) => {
                const i = nextConnection++;
                client.setRequests(pathsOfConnection(staticPaths.length, opts.connections, i).map((j) => requestOf(staticPaths[j], j)));
              },
            }
          : {}),
      },
      (err: Error | null, result: autocannon.Result) => (err ? reject(err) : resolve(result)),
    );
    // autocannon() builds the connections synchronously, and each sends its first request as it is
    // built: those requests wait, in this process, for the later connections to be built before
    // their answers can be read, so their latency is partly the load generator's own start. They
    // count for throughput and validity, not for the latency percentiles.
    const startedAt = performance.now();
    if (onResponse) instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => onResponse(ms, performance.now() - ms >= startedAt));
  });
}

function validity(scenario: Scenario, result: autocannon.Result): Validity {
  const unexpected: Record<string, number> = {};
  let unexpectedTotal = 0;
  for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {})) {
    if (Number(status) === scenario.expectStatus) continue;
    unexpected[status] = Number(count);
    unexpectedTotal += Number(count);
  }
  return { unexpected, unexpectedTotal, errors: result.errors, timeouts: result.timeouts };
}

/** Load whose figures are dropped (JIT, caches, connection pools); its answers still count for validity. */
export async function warmUp(scenario: Scenario, opts: { connections: number; durationS: number }): Promise<Validity> {
  if (opts.durationS <= 0) return { unexpected: {}, unexpectedTotal: 0, errors: 0, timeouts: 0 };
  return validity(scenario, await runOnce(scenario, opts));
}

export async function runRound(scenario: Scenario, opts: RoundOptions): Promise<Round> {
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const db0 = scenario.database && opts.backends ? await opts.backends.snapshot(scenario.database) : null;
  const others0 = opts.bystanders.map((b) => cpuTimeMs(b.pid));
  const cpu0 = scenario.serverPid ? cpuTimeMs(scenario.serverPid) : null;
  const machine0 = machineBusyMs();
  const client0 = process.cpuUsage();
  const startUs = Number(process.hrtime.bigint() / 1000n);
  const t0 = performance.now();
  let responses = 0;
  const result = await runOnce(scenario, opts, (ms, sentAfterStart) => {
    responses++;
    if (!sentAfterStart) return;
    if (n === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[n++] = ms;
  });
  const wallMs = performance.now() - t0;
  const endUs = Number(process.hrtime.bigint() / 1000n);
  const cpu1 = scenario.serverPid ? cpuTimeMs(scenario.serverPid) : null;
  const machine1 = machineBusyMs();
  const client = process.cpuUsage(client0);
  const others1 = opts.bystanders.map((b) => cpuTimeMs(b.pid));
  const db1 = db0 && scenario.database && opts.backends ? await opts.backends.snapshot(scenario.database) : null;
  const serverCpuMs = cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null;
  const dbCpuMs = db0 && db1 ? backendCpuBetween(db0, db1) : null;
  const sorted = latencies.subarray(0, n).sort();
  const bystanderCpuPct: Record<string, number> = {};
  let ownMs = (client.user + client.system) / 1000 + (serverCpuMs ?? 0) + (dbCpuMs ?? 0);
  opts.bystanders.forEach((b, i) => {
    const a = others0[i], z = others1[i];
    if (a !== null && z !== null) {
      bystanderCpuPct[b.name] = ((z - a) / wallMs) * 100;
      ownMs += z - a;
    }
  });
  // A remote database's work is not on this machine; a local one's is in dbCpuMs (when measured).
  const otherLoadCores = machine0 !== null && machine1 !== null && serverCpuMs !== null ? Math.max(0, machine1 - machine0 - ownMs) / wallMs : null;

  return {
    ...validity(scenario, result),
    startUs,
    endUs,
    requestsPerSec: result.requests.total / result.duration,
    total: result.requests.total,
    durationS: result.duration,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    serverCpuUsPerReq: serverCpuMs !== null && responses ? (serverCpuMs * 1000) / responses : null,
    serverCpuPct: serverCpuMs !== null ? (serverCpuMs / wallMs) * 100 : null,
    dbCpuUsPerReq: dbCpuMs !== null && responses ? (dbCpuMs * 1000) / responses : null,
    clientCpuPct: ((client.user + client.system) / 1000 / wallMs) * 100,
    bystanderCpuPct,
    otherLoadCores,
  };
}
