// Interleaved measurement (issue 11): the scenarios of a group (a scenario and its floor, or the
// three catalog sizes) are measured in short rounds taken in turn, A B, B A, A B, ... (for three:
// A B C, B C A, C A B, ...), after a warm-up of each. Drift of the machine (other load, thermal,
// leftovers of an earlier scenario) then lands on both sides of a ratio instead of one, and each
// round gives its own ratio from two runs seconds apart: the figures are medians over the rounds,
// printed with the spread (min-max) of the rounds.
import { loadavg } from 'node:os';
import { runRound, warmUp, type Round, type RoundOptions, type Scenario, type Validity, type Watched } from './load.js';

export interface GroupOptions {
  connections: number;
  rounds: number;
  roundS: number;
  warmupS: number;
  /** Every process the bench keeps alive; those not under load in a round are watched as bystanders. */
  watched: Watched[];
  backends: RoundOptions['backends'];
}

export interface Series {
  scenario: Scenario;
  rounds: Round[];
  warmup: Validity;
}

/** Median and range of a sample. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function spread(values: number[]): Spread | null {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { median, min: v[0], max: v[v.length - 1], n: v.length };
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

/**
 * Pause before each round: the previous round's server is still closing its connections and
 * collecting garbage for a moment after the load stops, and that must not land on the next one.
 */
const SETTLE_MS = 300;

/** Warm up every member, then `rounds` rounds, the order rotated by one each round. */
export async function measureGroup(scenarios: Scenario[], opts: GroupOptions): Promise<Series[]> {
  const series: Series[] = scenarios.map((scenario) => ({ scenario, rounds: [], warmup: { unexpected: {}, unexpectedTotal: 0, errors: 0, timeouts: 0 } }));
  const names = scenarios.map((s) => s.short).join(' / ');
  console.log(`  ${names}: ${opts.warmupS} s warm-up each, ${opts.rounds} rounds of ${opts.roundS} s${scenarios.length > 1 ? ' in turn' : ''}, ${opts.connections} connections (load avg ${load()})`);
  for (const s of series) s.warmup = await warmUp(s.scenario, { connections: opts.connections, durationS: opts.warmupS });
  for (let r = 0; r < opts.rounds; r++) {
    const order = series.map((_, i) => series[(i + r) % series.length]);
    const cells: string[] = [];
    const others: string[] = [];
    for (const s of order) {
      const bystanders = opts.watched.filter((w) => w.pid !== s.scenario.serverPid);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const round = await runRound(s.scenario, { connections: opts.connections, durationS: opts.roundS, bystanders, backends: opts.backends });
      s.rounds.push(round);
      cells.push(`${s.scenario.short} ${Math.round(round.requestsPerSec)}${round.unexpectedTotal + round.errors + round.timeouts ? ' (INVALID)' : ''}`);
      others.push(round.otherLoadCores === null ? '?' : round.otherLoadCores.toFixed(1));
    }
    const ratio = series.length === 2 ? `  ${((series[0].rounds[r].requestsPerSec / series[1].rounds[r].requestsPerSec) * 100).toFixed(0)} %` : '';
    console.log(`    round ${r + 1}: ${cells.join(', ')} req/s${ratio}   (other load ${others.join(' / ')} cores)`);
  }
  return series;
}

/** Per-round ratios a/b of a figure, rounds paired by index (each pair measured seconds apart). */
export function roundRatios(a: Series, b: Series, figure: (r: Round) => number | null): Spread | null {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.rounds.length, b.rounds.length); i++) {
    const x = figure(a.rounds[i]), y = figure(b.rounds[i]);
    if (x !== null && y !== null && y > 0) out.push(x / y);
  }
  return spread(out);
}

/** Median (and range) over the rounds of one figure. */
export function over(s: Series, figure: (r: Round) => number | null): Spread | null {
  return spread(s.rounds.map(figure).filter((x): x is number => x !== null));
}

/** Validity over the warm-up and every round. */
export function validityOf(s: Series): Validity & { responses: number } {
  const unexpected: Record<string, number> = { ...s.warmup.unexpected };
  let unexpectedTotal = s.warmup.unexpectedTotal, errors = s.warmup.errors, timeouts = s.warmup.timeouts, responses = 0;
  for (const r of s.rounds) {
    for (const [k, v] of Object.entries(r.unexpected)) unexpected[k] = (unexpected[k] ?? 0) + v;
    unexpectedTotal += r.unexpectedTotal;
    errors += r.errors;
    timeouts += r.timeouts;
    responses += r.total;
  }
  return { unexpected, unexpectedTotal, errors, timeouts, responses };
}
