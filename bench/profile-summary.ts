// Summarise V8 .cpuprofile files (from `BENCH_PROFILE=1 npm run bench`): where the service's CPU
// time goes, by area (self and inclusive time) and by function (self time). Node writes one file
// per thread; the main thread's is the big one.
//   node --import tsx bench/profile-summary.ts [--top=N] <file.cpuprofile>...
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/** A package under node_modules, a file of src/ or bench/, a node: internal module, or a V8 pseudo-frame. */
function area(n: Node): string {
  const { url, functionName } = n.callFrame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  const src = /\/(src|bench)\/(.+)$/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  if (url.startsWith('node:')) return url.replace(/^node:internal\/([^/]+).*/, 'node:$1');
  return url;
}

function add(m: Map<string, number>, key: string, v: number) {
  m.set(key, (m.get(key) ?? 0) + v);
}

export interface SummaryOptions {
  /** Only the samples taken within these windows (µs on the monotonic clock, as `process.hrtime`). */
  windows?: readonly (readonly [number, number])[];
  top?: number;
  /** Which tables to print (default all three). */
  tables?: ('area' | 'inclusive' | 'function' | 'own')[];
  title?: string;
}

export function summarise(file: string, options: SummaryOptions = {}) {
  const top = options.top ?? 30;
  const profile: Profile & { startTime: number } = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const self = new Map<string, number>();
  const selfFn = new Map<string, number>();
  const inclusive = new Map<string, number>();
  /** Our own functions (src/), inclusive: what each costs with everything it calls. */
  const ownInclusive = new Map<string, number>();
  let total = 0;
  let at = profile.startTime;
  const inWindow = (t: number) => !options.windows || options.windows.some(([a, b]) => t >= a && t <= b);
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    const node = byId.get(profile.samples[i]);
    if (!node || !inWindow(at)) continue;
    total += dt;
    add(self, area(node), dt);
    add(selfFn, `${node.callFrame.functionName || '(anonymous)'}  ${area(node)}:${node.callFrame.lineNumber + 1}`, dt);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const a = area(byId.get(id)!);
      if (a === '(root)' || seen.has(a)) continue;
      seen.add(a);
      add(inclusive, a, dt);
    }
    const seenFn = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id)!;
      const a = area(n);
      if (!a.startsWith('src/')) continue;
      const key = `${n.callFrame.functionName || '(anonymous)'}  ${a}:${n.callFrame.lineNumber + 1}`;
      if (seenFn.has(key)) continue;
      seenFn.add(key);
      add(ownInclusive, key, dt);
    }
  }

  const busy = total - (self.get('(idle)') ?? 0);
  const print = (title: string, m: Map<string, number>) => {
    if (busy <= 0) return;
    console.log(`\n${title}`);
    for (const [k, v] of [...m].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`  ${((v / busy) * 100).toFixed(1).padStart(5)} %  ${(v / 1000).toFixed(0).padStart(7)} ms  ${k}`);
    }
  };
  const tables = options.tables ?? ['area', 'inclusive', 'function'];
  console.log(`\n=== ${options.title ?? file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s not idle (percentages of non-idle time)`);
  if (tables.includes('area')) print('self time by area', self);
  if (tables.includes('inclusive')) print('inclusive time by area (each area once per sample)', inclusive);
  if (tables.includes('function')) print('self time by function', selfFn);
  if (tables.includes('own')) print('inclusive time of our own functions (src/; each once per sample)', ownInclusive);
}

// As a command: node --import tsx bench/profile-summary.ts [--top=N] [--own] <file.cpuprofile>...
// (--own adds the inclusive time of each of our own functions.)
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const files = args.filter((a) => !a.startsWith('--'));
  const top = Number(args.find((a) => a.startsWith('--top='))?.slice(6) ?? 30);
  if (!files.length || !(top > 0)) {
    console.error('usage: bench/profile-summary.ts [--top=N] <file.cpuprofile>...');
    process.exit(2);
  }
  const own = args.includes('--own');
  for (const file of files) summarise(file, { top, ...(own ? { tables: ['area', 'inclusive', 'function', 'own'] } : {}) });
}
