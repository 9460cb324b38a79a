// Where an app keeps each store's tokens (C4.4, C4.5): the `TokenStore` a `TokenKeeper` reads and
// writes, in memory or in one JSON file shared by the processes of a host.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Tokens } from './install.js';
import { KeyedQueue, withLockFile } from './locks.js';

/** Where an app keeps each store's tokens. */
export interface TokenStore {
  get(shop: string): Promise<Tokens | null>;
  set(shop: string, tokens: Tokens): Promise<void>;
  delete(shop: string): Promise<void>;
  /**
   * Runs `work` while no other `lock` of this shop runs on the store, wherever the store is shared
   * (other instances, other processes): `TokenKeeper` refreshes under it, after reading the store
   * again, so two keepers never present one refresh token twice (C4.5 reuse detection revokes the
   * installation). A store shared by several processes (a database) should offer it, e.g. with a
   * row lock or an advisory lock held for the length of `work`. Without it, only the refreshes of
   * one keeper are single-flight.
   */
  lock?<T>(shop: string, work: () => Promise<T>): Promise<T>;
}

export class MemoryTokenStore implements TokenStore {
  private readonly byShop = new Map<string, Tokens>();
  private readonly locks = new KeyedQueue();
  lock<T>(shop: string, work: () => Promise<T>): Promise<T> {
    return this.locks.run(shop, work);
  }
  async get(shop: string) {
    return this.byShop.get(shop) ?? null;
  }
  async set(shop: string, tokens: Tokens) {
    this.byShop.set(shop, { ...tokens });
  }
  async delete(shop: string) {
    this.byShop.delete(shop);
  }
}

/**
 * The write queue of each token file, shared by every FileTokenStore of this process on that file.
 * A queue per instance let two instances of one file (an app's `/auth` handler and its worker, or a
 * store opened per request) write at once: both wrote the same temporary file, one rename failed
 * (ENOENT), and a read-modify-write made before the other's rename lost that store's tokens.
 */
const fileQueues = new Map<string, { writing: Promise<void>; locks: KeyedQueue }>();

/**
 * Writes `path` whole through a temporary file beside it, renamed over it. The temporary name is
 * random and created exclusively (never an existing file or symlink): `<file>.<pid>.tmp`, opened
 * as it came, let anyone who can write to the directory place a symlink there beforehand and take
 * the tokens (the rename then made the token file that symlink). A failed write leaves no file.
 */
async function writeNew(path: string, text: string): Promise<void> {
  const tmp = `${path}.${randomBytes(12).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, text, { mode: 0o600, flag: 'wx' });
    await rename(tmp, path);
  } catch (err) {
    // EEXIST: the name is someone else's file, to be left alone; otherwise it is ours (a full disk).
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/**
 * Tokens in one JSON file (mode 0600), written whole to a temporary file and renamed, so a crash
 * never leaves half a file. Any number of instances of one file in a process write one after the
 * other, and every write (`set`, `delete`, whoever calls them) re-reads the file under
 * `<file>.write.lock`, so the processes sharing it never write back another's stale copy. Its
 * `lock` also holds `<file>.lock` (withLockFile), so the processes of one host sharing the file
 * refresh a store's tokens one at a time; processes on several hosts need a shared store.
 */
export class FileTokenStore implements TokenStore {
  private readonly queue: { writing: Promise<void>; locks: KeyedQueue };
  constructor(private readonly path: string) {
    const key = resolve(path);
    let queue = fileQueues.get(key);
    if (!queue) fileQueues.set(key, (queue = { writing: Promise.resolve(), locks: new KeyedQueue() }));
    this.queue = queue;
  }

  /** This process's callers queue per shop; then the lock file, one holder per file across processes. */
  lock<T>(shop: string, work: () => Promise<T>): Promise<T> {
    return this.queue.locks.run(shop, () => withLockFile(`${this.path}.lock`, work));
  }

  private async readAll(): Promise<Record<string, Tokens>> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8')) as Record<string, Tokens>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw err;
    }
  }

  /**
   * One read-modify-write of the whole file, under `<file>.write.lock` across processes. The queue
   * alone ordered only this process's writes: a `forget` (delete) in one process renamed back a copy
   * read before another process saved a shop's rotated refresh token under `lock`, and that shop's
   * next refresh presented the rotated one (C4.5: the platform revokes the installation). So the
   * file is read again inside the lock. It is not `<file>.lock`: that one is held for a refresh's
   * whole round trip to the platform, and `set` runs inside it (and a forget in this process waited
   * for by a refresh holding it would never get it). This lock is always taken last and held only
   * for the read, write and rename, so it waits on nothing else and cannot deadlock.
   */
  private change(fn: (all: Record<string, Tokens>) => void): Promise<void> {
    const write = this.queue.writing.then(() =>
      withLockFile(`${this.path}.write.lock`, async () => {
        const all = await this.readAll();
        fn(all);
        await mkdir(dirname(this.path), { recursive: true });
        await writeNew(this.path, JSON.stringify(all, null, 2));
      }),
    );
    // The failure is this write's caller's to see; the queue itself must not stay rejected, or one
    // failed write (a full disk for a moment) would fail every later get and set of the process.
    this.queue.writing = write.catch(() => undefined);
    return write;
  }

  async get(shop: string) {
    await this.queue.writing;
    return (await this.readAll())[shop] ?? null;
  }
  set(shop: string, tokens: Tokens) {
    return this.change((all) => void (all[shop] = tokens));
  }
  delete(shop: string) {
    return this.change((all) => void delete all[shop]);
  }
}
