// Writes that happen behind a request, never in its way (function run records, shipping rate
// answers): each request hands its rows over and answers at once; the writer writes what has
// gathered from every request in one statement, at most `maxDelayMs` later (or at once past
// `maxBatch` rows). Under load that is one insert and one commit for many requests rather than one
// awaited per request. What is still gathered when the process stops is written by close(); a hard
// kill loses at most `maxDelayMs` of rows. A failed write is logged and forgotten: these are
// records and caches, which the caller has chosen not to wait for.
import type { Logger } from '../platform/logger.js';

export interface BatchWriterOptions<T> {
  /** Writes one batch (at most `maxBatch` rows) in one statement. */
  write(rows: T[]): Promise<unknown>;
  log: Logger;
  /** The log line of a failed write. */
  failure: string;
  /** Rows gathered under the same key replace one another (the later wins); without, every row is kept. */
  keyOf?: (row: T) => string;
  maxDelayMs?: number;
  maxBatch?: number;
}

export const BATCH_MAX_DELAY_MS = 50;
export const BATCH_MAX_ROWS = 500;

export class BatchWriter<T> {
  private gathered = new Map<string | number, T>();
  private serial = 0;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private readonly maxDelayMs: number;
  private readonly maxBatch: number;

  constructor(private readonly options: BatchWriterOptions<T>) {
    this.maxDelayMs = options.maxDelayMs ?? BATCH_MAX_DELAY_MS;
    this.maxBatch = options.maxBatch ?? BATCH_MAX_ROWS;
  }

  add(rows: readonly T[]): void {
    if (!rows.length) return;
    const keyOf = this.options.keyOf;
    for (const row of rows) {
      const key = keyOf ? keyOf(row) : this.serial++;
      // A replaced row moves to the end, as a new one would.
      this.gathered.delete(key);
      this.gathered.set(key, row);
    }
    if (this.gathered.size >= this.maxBatch) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.maxDelayMs);
      this.timer.unref();
    }
  }

  /** Rows gathered and not yet handed to a write. */
  get pending(): number {
    return this.gathered.size;
  }

  /** Writes what has gathered (after any write in progress); resolves when it is written. Never rejects. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.gathered.values()];
    this.gathered = new Map();
    if (batch.length) {
      this.writing = this.writing.then(async () => {
        try {
          for (let i = 0; i < batch.length; i += this.maxBatch) await this.options.write(batch.slice(i, i + this.maxBatch));
        } catch (err) {
          this.options.log.error({ err, rows: batch.length }, this.options.failure);
        }
      });
    }
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
