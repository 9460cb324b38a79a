// Several processes share one limit through Redis (app-api.md Limits): 4 workers fire 200 hits
// each at one key with limit 50, on Redis's own clock. Every check below is implied by an atomic
// store whatever the scheduling (no timing thresholds), yet a non-atomic one (read the count, then
// add in a second round trip) fails them: concurrent readers all see room and over-admit.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';

const REDIS_URL = process.env.REDIS_URL;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORKERS = 4;
const HITS = 200;
const LIMIT = 50;
const WINDOW_US = 1_000_000;

interface Decision {
  allowed: boolean;
  nowMs: number; // Redis TIME when the script ran
  clientMs: number;
}

/** Starts the workers, releases them together once all are connected, and collects their lines. */
async function runWorkers(env: Record<string, string>): Promise<Decision[]> {
  const children = Array.from({ length: WORKERS }, () =>
    spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/ratelimit-worker.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const decisions: Decision[] = [];
  let ready = 0;
  const done = children.map(
    (child) =>
      new Promise<void>((resolve, reject) => {
        let stderr = '';
        child.stderr.on('data', (b) => (stderr += b));
        createInterface({ input: child.stdout }).on('line', (line) => {
          const msg = JSON.parse(line);
          if (msg.type === 'decision') decisions.push(msg);
          else if (msg.type === 'ready' && ++ready === WORKERS) for (const c of children) c.stdin.write('go\n');
        });
        child.on('error', reject);
        child.stdin.on('error', () => {}); // a worker that died early is reported by 'close'
        child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`worker exited ${code}: ${stderr}`))));
      }),
  );
  try {
    await Promise.all(done);
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
  }
  return decisions;
}

/** How many of the sorted times `ts` fall in [from, to). */
function countIn(ts: number[], from: number, to: number): number {
  let n = 0;
  for (const t of ts) if (t >= from && t < to) n++;
  return n;
}

describe.skipIf(!REDIS_URL)('redis store across processes (set REDIS_URL to run)', () => {
  const prefix = `test:rlmp:${randomBytes(6).toString('hex')}:`;
  afterAll(async () => {
    const redis = new Redis(REDIS_URL!, { maxRetriesPerRequest: 1 });
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('admits at most `limit` per sliding second in total, exactly `limit` in the first', async () => {
    const decisions = await runWorkers({
      REDIS_URL: REDIS_URL!,
      RL_PREFIX: prefix,
      RL_KEY: 'shared',
      RL_LIMIT: String(LIMIT),
      RL_COUNT: String(HITS),
    });
    expect(decisions).toHaveLength(WORKERS * HITS);

    // Work in integer microseconds, the unit the script stores.
    const us = (d: Decision) => Math.round(d.nowMs * 1000);
    const allowed = decisions.filter((d) => d.allowed).map(us).sort((a, b) => a - b);
    const refused = decisions.filter((d) => !d.allowed).map(us);

    // 1. The sliding-window invariant: any limit+1 admissions span at least a full window.
    for (let i = 0; i + LIMIT < allowed.length; i++) expect(allowed[i + LIMIT] - allowed[i]).toBeGreaterThanOrEqual(WINDOW_US);
    // The coarse form of the same: at most `limit` per window spanned.
    const windows = Math.floor((allowed[allowed.length - 1] - allowed[0]) / WINDOW_US) + 1;
    expect(allowed.length).toBeLessThanOrEqual(LIMIT * windows);

    // 2. Each decision agrees with the admitted log. Ties (same microsecond) may have run in either
    // order, so an admission only counts earlier times, a refusal also counts its own time.
    for (const t of allowed) expect(countIn(allowed, t - WINDOW_US + 1, t)).toBeLessThan(LIMIT);
    for (const t of refused) expect(countIn(allowed, t - WINDOW_US + 1, t + 1)).toBeGreaterThanOrEqual(LIMIT);

    // 3. The first window admits min(limit, demand): nothing was there before it, so any refusal
    // in it means `limit` admissions. 800 hits released together outrun 50 per second, so the
    // demand does exceed the limit and that is exactly `limit`.
    const firstEnd = allowed[0] + WINDOW_US;
    const admittedFirst = countIn(allowed, allowed[0], firstEnd);
    const demandFirst = admittedFirst + refused.filter((t) => t < firstEnd).length;
    expect(demandFirst).toBeGreaterThan(LIMIT);
    expect(admittedFirst).toBe(Math.min(LIMIT, demandFirst));
  }, 30_000);
});
