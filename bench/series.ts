// Interleaved measurement (issue 11): the scenarios of a group (a scenario and its floor, or the
// three catalog sizes) are measured in short rounds taken in turn, A B, B A, A B, ... (for three:
// A B C, B C A, C A B, ...), after a warm-up of each. Drift of the machine (other load, thermal,
// leftovers of an earlier scenario) then lands on both sides of a ratio instead of one, and each
// round gives its own ratio from two runs seconds apart: the figures are medians over the rounds,
// printed with the spread (min-max) of the rounds.
//
// Other load on the machine (what it spends beyond the bench's own processes) is measured in every
// round. A round where it passes `quietCores` during any member is set aside, and rounds go on (up
// to twice as many) until `rounds` quiet ones are in: a neighbour's burst slows one side of a pair
// and not the other. If fewer than half the rounds asked for are quiet (or none of the first
// `rounds`), all rounds are used and the group is marked noisy. Set-aside rounds still count for
// validity.
import { loadavg } from 'node:os';
import { runRound, warmUp, type Round, type RoundOptions, type Scenario, type Validity, type Watched } from './load.js';

export interface GroupOptions {
  connections: number;
  rounds: number;
  roundS: number;
  warmupS: number;
  /** Other load (cores) above which a round is set aside. */
  quietCores: number;
  /** Every process the bench keeps alive; those not under load in a round are watched as bystanders. */
  watched: Watched[];
  backends: RoundOptions['backends'];
}

export interface Series {
  scenario: Scenario;
  /** The rounds the figures come from (the quiet ones, unless the group is noisy). */
  rounds: Round[];
  /** Rounds set aside for other load on the machine. */
  setAside: Round[];
  /** Fewer than half the rounds asked for were quiet: `rounds` holds them all. */
  noisy: boolean;
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

/** Warm up every member, then rounds, the order rotated by one each round, until enough are quiet. */
export async function measureGroup(scenarios: Scenario[], opts: GroupOptions): Promise<Series[]> {
  const series: Series[] = scenarios.map((scenario) => ({ scenario, rounds: [], setAside: [], noisy: false, warmup: { unexpected: {}, unexpectedTotal: 0, errors: 0, timeouts: 0 } }));
  const names = scenarios.map((s) => s.short).join(' / ');
  console.log(`  ${names}: ${opts.warmupS} s warm-up each, ${opts.rounds} rounds of ${opts.roundS} s${scenarios.length > 1 ? ' in turn' : ''}, ${opts.connections} connections (load avg ${load()})`);
  for (const s of series) s.warmup = await warmUp(s.scenario, { connections: opts.connections, durationS: opts.warmupS });
  const all: Round[][] = series.map(() => []);
  const quiet: boolean[] = [];
  // Until `rounds` quiet rounds, at most twice as many; a machine busy for all of the first `rounds`
  // will not turn quiet in time: stop there, marked noisy.
  const more = () => quiet.filter(Boolean).length < opts.rounds && quiet.length < 2 * opts.rounds && !(quiet.length >= opts.rounds && !quiet.some(Boolean));
  for (let r = 0; more(); r++) {
    const cells: string[] = [];
    const others: string[] = [];
    let isQuiet = true;
    for (let k = 0; k < series.length; k++) {
      const i = (k + r) % series.length;
      const s = series[i];
      const bystanders = opts.watched.filter((w) => w.pid !== s.scenario.serverPid);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const round = await runRound(s.scenario, { connections: opts.connections, durationS: opts.roundS, bystanders, backends: opts.backends });
      all[i].push(round);
      if (round.otherLoadCores !== null && round.otherLoadCores > opts.quietCores) isQuiet = false;
      cells.push(`${s.scenario.short} ${Math.round(round.requestsPerSec)}${round.unexpectedTotal + round.errors + round.timeouts ? ' (INVALID)' : ''}`);
      others.push(round.otherLoadCores === null ? '?' : round.otherLoadCores.toFixed(1));
    }
    quiet.push(isQuiet);
    const ratio = series.length === 2 ? `  ${((all[0][r].requestsPerSec / all[1][r].requestsPerSec) * 100).toFixed(0)} %` : '';
    console.log(`    round ${r + 1}: ${cells.join(', ')} req/s${ratio}   (other load ${others.join(' / ')} cores${isQuiet ? '' : ', over ' + opts.quietCores + ': noisy'})`);
  }
  const quietCount = quiet.filter(Boolean).length;
  const noisy = quietCount < Math.ceil(opts.rounds / 2);
  series.forEach((s, i) => {
    s.noisy = noisy;
    s.rounds = noisy ? all[i] : all[i].filter((_, r) => quiet[r]);
    s.setAside = noisy ? [] : all[i].filter((_, r) => !quiet[r]);
  });
  if (noisy) console.log(`    NOISY: only ${quietCount} of ${quiet.length} rounds had other load <= ${opts.quietCores} cores; figures over all ${quiet.length} rounds`);
  else if (quietCount < quiet.length) console.log(`    ${quiet.length - quietCount} round(s) set aside for other load > ${opts.quietCores} cores`);
  return series;
}

/** Per-round ratios a/b of a figure, rounds paired by index (each pair measured seconds apart). */
export function roundRatios(a: Series, b: Series, figure: (r: Round, s: Series) => number | null): Spread | null {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.rounds.length, b.rounds.length); i++) {
    const x = figure(a.rounds[i], a), y = figure(b.rounds[i], b);
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
  for (const r of [...s.rounds, ...s.setAside]) {
    for (const [k, v] of Object.entries(r.unexpected)) unexpected[k] = (unexpected[k] ?? 0) + v;
    unexpectedTotal += r.unexpectedTotal;
    errors += r.errors;
    timeouts += r.timeouts;
    responses += r.total;
  }
  return { unexpected, unexpectedTotal, errors, timeouts, responses };
}
