// The locks token stores offer `TokenKeeper` so that one refresh of a store's tokens runs at a
// time across every keeper sharing the store (C4.5: a refresh token presented after another keeper
// rotated it revokes the installation). In one process a queue per key; across processes sharing
// a token file, a lock file beside it (and a second one, held only while the file is rewritten, so
// no process writes back a stale copy of another's tokens: see FileTokenStore).
import { mkdir, open, stat, unlink, utimes } from 'node:fs/promises';
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

/** Runs `work` holding `lockPath` (created exclusively, mode 0600), which other processes wait for. */
export async function withLockFile<T>(lockPath: string, work: () => Promise<T>, staleMs = LOCK_STALE_MS): Promise<T> {
  await mkdir(dirname(lockPath), { recursive: true });
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const held = await stat(lockPath).catch(() => null);
    if (held && Date.now() - held.mtimeMs > staleMs) await unlink(lockPath).catch(() => undefined);
    else await sleep(POLL_MS + Math.random() * POLL_MS);
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
    await unlink(lockPath).catch(() => undefined);
  }
}
