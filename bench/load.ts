// One load scenario with autocannon, in this process: a warm-up whose figures are dropped, then the
// measured run. Latency percentiles are computed here from every response's exact time (autocannon's
// own histogram has 1 ms resolution, too coarse for a hello-world floor).
import autocannon from 'autocannon';
import { cpuTimeMs } from './children.js';

export interface Scenario {
  name: string;
  url: string;
  /** Status every response must have (anything else is counted and invalidates the run). */
  expectStatus: number;
  /** Request headers cycled through per connection (one entry per token); `[{}]` for none. */
  headerSets: Record<string, string>[];
  /** The server's pid, to measure the CPU time it spends per request. */
  serverPid?: number;
  /** Paths (with query) cycled through instead of the URL's own, entry i with header set i mod n. */
  paths?: string[];
}

export interface LoadOptions {
  connections: number;
  durationS: number;
  warmupS: number;
}

export interface LoadResult {
  name: string;
  expectStatus: number;
  requestsPerSec: number;
  total: number;
  durationS: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Responses whose status was not the expected one, by status. */
  unexpected: Record<string, number>;
  unexpectedTotal: number;
  errors: number;
  timeouts: number;
  status429: number;
  /** Server process CPU time per response (µs) and its share of one core during the run (%). */
  serverCpuUsPerReq: number | null;
  serverCpuPct: number | null;
  /** The same for this (load-generating) process. */
  clientCpuPct: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function runOnce(scenario: Scenario, opts: { connections: number; durationS: number }, onLatency?: (ms: number) => void): Promise<autocannon.Result> {
  const url = new URL(scenario.url);
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: url.origin,
        connections: opts.connections,
        pipelining: 1,
        duration: opts.durationS,
        timeout: 10,
        // Static requests, built once: each connection walks the list, one token per request.
        requests: scenario.paths
          ? scenario.paths.map((path, i) => ({ method: 'GET', path, headers: scenario.headerSets[i % scenario.headerSets.length] }))
          : scenario.headerSets.map((headers) => ({ method: 'GET', path: url.pathname + url.search, headers })),
      },
      (err: Error | null, result: autocannon.Result) => (err ? reject(err) : resolve(result)),
    );
    if (onLatency) instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => onLatency(ms));
  });
}

export async function runScenario(scenario: Scenario, opts: LoadOptions): Promise<LoadResult> {
  if (opts.warmupS > 0) await runOnce(scenario, { connections: opts.connections, durationS: opts.warmupS });

  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const cpu0 = scenario.serverPid ? cpuTimeMs(scenario.serverPid) : null;
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await runOnce(scenario, { connections: opts.connections, durationS: opts.durationS }, (ms) => {
    if (n === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[n++] = ms;
  });
  const wallMs = performance.now() - t0;
  const cpu1 = scenario.serverPid ? cpuTimeMs(scenario.serverPid) : null;
  const client = process.cpuUsage(client0);
  const serverCpuMs = cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null;
  const sorted = latencies.subarray(0, n).sort();

  const unexpected: Record<string, number> = {};
  let unexpectedTotal = 0;
  for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {})) {
    if (Number(status) === scenario.expectStatus) continue;
    unexpected[status] = Number(count);
    unexpectedTotal += Number(count);
  }
  return {
    name: scenario.name,
    expectStatus: scenario.expectStatus,
    requestsPerSec: result.requests.total / result.duration,
    total: result.requests.total,
    durationS: result.duration,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    unexpected,
    unexpectedTotal,
    errors: result.errors,
    timeouts: result.timeouts,
    status429: unexpected['429'] ?? 0,
    serverCpuUsPerReq: serverCpuMs !== null && n ? (serverCpuMs * 1000) / n : null,
    serverCpuPct: serverCpuMs !== null ? (serverCpuMs / wallMs) * 100 : null,
    clientCpuPct: ((client.user + client.system) / 1000 / wallMs) * 100,
  };
}
