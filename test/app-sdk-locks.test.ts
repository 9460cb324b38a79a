// The lock file a FileTokenStore refreshes under (C4.5: a refresh token presented after another
// holder rotated it revokes the installation, so two holders at once cost the merchant the app).
// A lock left by a dead process is taken over once stale. Two waiters that had judged the same
// stale file each unlinked `lockPath`: the second removed the lock the first had just created in
// its place, and both held it. The file system is wrapped here so that every waiter's calls can
// be held back (each waiter runs in its own AsyncLocalStorage context), which forces that
// interleaving, or slowed at random, which tries many others.
import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from './helpers/temp-dirs.js';
import { takeoverClaimPath, withLockFile } from '../packages/app-sdk/src/locks.js';

const fsHook = vi.hoisted(() => ({
  before: null as null | ((op: string, path: string) => Promise<unknown> | void),
  after: null as null | ((op: string, path: string) => void),
}));
vi.mock('node:fs/promises', async (original) => {
  const fs = await original<Record<string, unknown>>();
  const wrapped: Record<string, unknown> = { ...fs };
  for (const [name, fn] of Object.entries(fs)) {
    if (typeof fn !== 'function' || name === 'watch') continue;
    wrapped[name] = async (...args: unknown[]) => {
      await fsHook.before?.(name, String(args[0]));
      const result = await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
      fsHook.after?.(name, String(args[0]));
      return result;
    };
  }
  return { ...wrapped, default: wrapped };
});

afterEach(() => {
  fsHook.before = null;
  fsHook.after = null;
});

const waiter = new AsyncLocalStorage<string>();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A lock file left an hour ago by a process that died holding it. */
function staleLock(lockPath: string): void {
  writeFileSync(lockPath, '999999\n');
  const anHourAgo = new Date(Date.now() - 3600_000);
  utimesSync(lockPath, anHourAgo, anHourAgo);
}

/** Work that counts how many holders run at once. */
function holders() {
  const state = { now: 0, most: 0, order: [] as string[] };
  const work = (name: string, ms: number, started?: () => void) => async () => {
    state.now++;
    state.most = Math.max(state.most, state.now);
    state.order.push(name);
    started?.();
    await sleep(ms);
    state.now--;
  };
  return { state, work };
}

describe('withLockFile: a stale lock is taken over by one waiter only (C4.5)', () => {
  it('two waiters that judged the same stale lock: the later one does not remove the lock the first took', async () => {
    const lockPath = join(tempDir('svc-sdk-locks-'), 'tokens.json.lock');
    staleLock(lockPath);
    const { state, work } = holders();
    let aStarted!: () => void;
    const aHolds = new Promise<void>((resolve) => (aStarted = resolve));
    let bJudged!: () => void;
    const bHasJudged = new Promise<void>((resolve) => (bJudged = resolve));
    let bWaits = false;
    // B stats the stale lock (and judges it stale), then stops until A has taken it over and holds it.
    fsHook.after = (op, path) => {
      if (waiter.getStore() === 'B' && op === 'stat' && path === lockPath && !bWaits) {
        bWaits = true;
        bJudged();
      }
    };
    fsHook.before = async () => {
      if (waiter.getStore() === 'B' && bWaits) await aHolds;
    };
    const b = waiter.run('B', () => withLockFile(lockPath, work('B', 50)));
    await bHasJudged;
    const a = waiter.run('A', () => withLockFile(lockPath, work('A', 400, aStarted)));
    await Promise.all([a, b]);
    expect(state.most).toBe(1);
    expect(state.order).toEqual(['A', 'B']);
    // Nothing is left beside the token file: no lock, no claim, nothing set aside.
    expect(readdirSync(dirname(lockPath))).toEqual([]);
  });

  it('many waiters on one stale lock, the file system slowed at random: one holder at a time', async () => {
    const lockPath = join(tempDir('svc-sdk-locks-'), 'tokens.json.lock');
    const { state, work } = holders();
    fsHook.before = () => sleep(Math.random() * 4);
    for (let round = 0; round < 8; round++) {
      staleLock(lockPath);
      await Promise.all(Array.from({ length: 5 }, (_, i) => waiter.run(`W${i}`, () => withLockFile(lockPath, work(`W${i}`, 5)))));
    }
    expect(state.order).toHaveLength(40);
    expect(state.most).toBe(1);
    expect(readdirSync(dirname(lockPath))).toEqual([]);
  }, 60_000);

  it('a claim on the stale lock is respected while fresh; one left by a waiter that died is passed over once stale', async () => {
    const lockPath = join(tempDir('svc-sdk-locks-'), 'tokens.json.lock');
    staleLock(lockPath);
    // Another waiter claimed the stale lock to remove it, and died before it did.
    writeFileSync(takeoverClaimPath(lockPath, statSync(lockPath), 0), '');
    let held = false;
    const started = Date.now();
    const done = withLockFile(lockPath, async () => {
      held = true;
    }, 1000);
    await sleep(500);
    expect(held).toBe(false); // the claim is fresh: its waiter may be removing the stale lock right now
    await done;
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(readdirSync(dirname(lockPath))).toEqual([]);
  });

  it('a holder whose lock was taken over while it worked leaves the new holder\'s lock in place', async () => {
    const lockPath = join(tempDir('svc-sdk-locks-'), 'tokens.json.lock');
    await withLockFile(lockPath, async () => {
      // As if this holder had stalled past LOCK_STALE_MS and another process had taken the lock over.
      unlinkSync(lockPath);
      writeFileSync(lockPath, 'another holder\n');
    });
    expect(existsSync(lockPath)).toBe(true);
    expect(readFileSync(lockPath, 'utf8')).toBe('another holder\n');
  });
});
