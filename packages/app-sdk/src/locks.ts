// The locks token stores offer `TokenKeeper` so that one refresh of a store's tokens runs at a
// time across every keeper sharing the store (C4.5: a refresh token presented after another keeper
// rotated it revokes the installation). In one process a queue per key; across processes sharing
// a token file, a lock file beside it (and a second one, held only while the file is rewritten, so
// no process writes back a stale copy of another's tokens: see FileTokenStore).
import { randomUUID } from 'node:crypto';
import type { Stats } from 'node:fs';
import { link, mkdir, open, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Runs work one at a time per key, in this process (callers of other keys do not wait). */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(work);
    const tail = result.then(() => undefined, () => undefined); // one caller's failure does not stop the next
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/**
 * A lock file untouched this long was left by a process that died holding it, and is taken over.
 * Its holder touches it every LOCK_HEARTBEAT_MS, so a refresh that waits on a slow platform keeps it.
 */
export const LOCK_STALE_MS = 30_000;
const LOCK_HEARTBEAT_MS = 5_000;
const POLL_MS = 25;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The name of the `k`th claim on the stale lock file `held` (its inode and mtime make it that file's alone). */
export function takeoverClaimPath(lockPath: string, held: Stats, k: number): string {
  return `${lockPath}.${held.dev}-${held.ino}-${held.mtimeMs}.takeover${k}`;
}

const sameFile = (a: Stats, b: Stats) => a.dev === b.dev && a.ino === b.ino && a.mtimeMs === b.mtimeMs;

/**
 * Removes the file at `lockPath` if `isIt` (given the file's new name) says it is the one meant.
 * It is renamed aside first: rename is atomic, so the file checked is the file removed, whatever
 * appears at `lockPath` meanwhile. A file that is not the one meant goes back, with link, which
 * never replaces a lock another waiter took meanwhile.
 */
async function removeLockIf(lockPath: string, isIt: (aside: string) => Promise<boolean>): Promise<void> {
  const aside = `${lockPath}.${process.pid}-${randomUUID()}.aside`;
  try {
    await rename(lockPath, aside);
  } catch {
    return; // gone already (or not ours to move): nothing to remove
  }
  try {
    if (!(await isIt(aside).catch(() => false))) await link(aside, lockPath).catch(() => undefined);
  } finally {
    await unlink(aside).catch(() => undefined);
  }
}

/**
 * Removes the stale lock file `held` (as `stat` saw it) unless another waiter is removing it; false
 * when one is (the caller waits). Each waiter that had judged the file stale used to unlink
 * `lockPath`: the second one removed the lock the first had just created there, and both held it
 * (C4.5: both refreshed with one refresh token, and the platform revoked the installation). Now
 * only the waiter that creates the file's claim (exclusively, named by its inode and mtime)
 * removes it, and only while the file at `lockPath` is still that file. A claim left by a waiter
 * that died midway is stale after `staleMs` too, and the next claim (k + 1) is made: one waiter
 * creates it, however many judged the old one stale, so no claim is ever removed to be retaken.
 */
async function takeOver(lockPath: string, held: Stats, staleMs: number): Promise<boolean> {
  for (let k = 0; ; k++) {
    const claim = takeoverClaimPath(lockPath, held, k);
    try {
      await (await open(claim, 'wx', 0o600)).close();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const claimed = await stat(claim).catch(() => null);
      if (claimed && Date.now() - claimed.mtimeMs > staleMs) continue;
      // Being removed by another waiter; or removed already (its claims go after it), and then
      // the next attempt at the lock is at once.
      return claimed === null;
    }
    try {
      // A waiter that judged this file stale long ago may claim it after the winner's claims are
      // gone: by then the file at `lockPath` is another, which it must leave alone.
      const now = await stat(lockPath).catch(() => null);
      if (now && sameFile(now, held)) await removeLockIf(lockPath, async (aside) => sameFile(await stat(aside), held));
      return true;
    } finally {
      for (let i = 0; i <= k; i++) await unlink(takeoverClaimPath(lockPath, held, i)).catch(() => undefined);
    }
  }
}

/** Runs `work` holding `lockPath` (created exclusively, mode 0600), which other processes wait for. */
export async function withLockFile<T>(lockPath: string, work: () => Promise<T>, staleMs = LOCK_STALE_MS): Promise<T> {
  await mkdir(dirname(lockPath), { recursive: true });
  // Unique to this holding: at release, the file at `lockPath` is removed only if it still says so.
  const mine = `${process.pid} ${randomUUID()}\n`;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      await handle.writeFile(mine);
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const held = await stat(lockPath).catch(() => null);
    if (held && Date.now() - held.mtimeMs > staleMs && (await takeOver(lockPath, held, staleMs))) continue;
    if (held) await sleep(POLL_MS + Math.random() * POLL_MS);
  }
  const heartbeat = setInterval(() => {
    const at = new Date();
    utimes(lockPath, at, at).catch(() => undefined);
  }, LOCK_HEARTBEAT_MS);
  heartbeat.unref();
  try {
    return await work();
  } finally {
    clearInterval(heartbeat);
    // A holder stalled past `staleMs` (its heartbeat could not run) may have been taken over: then
    // the file at `lockPath` is the new holder's, and removing it would let a third one in.
    await removeLockIf(lockPath, async (aside) => (await readFile(aside, 'utf8')) === mine);
  }
}
