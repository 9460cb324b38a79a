// Attempts finishing close together are recorded together: while one write is in progress the
// next ones queue, and the queue is written as one statement. Under load that turns hundreds of
// small transactions a second into a few; at rest each attempt is written at once.
import type { Db } from '../db/db.js';
import { recordAttempts, type AttemptRecord } from './deliveries.repo.js';

const MAX_BATCH = 500;

interface Pending {
  record: AttemptRecord;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class AttemptRecorder {
  private queue: Pending[] = [];
  private writing: Promise<void> | null = null;

  constructor(private readonly db: Db, private readonly onError: (err: unknown) => void) {}

  /** Resolves once the attempt is written (or was dropped because the lease was lost). */
  record(record: AttemptRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          await this.writeWithRetry(batch.map((p) => p.record));
          for (const p of batch) p.resolve();
        } catch (err) {
          // Unrecorded attempts keep their lease until it expires; then they are attempted again
          // (at least once, C8.1). Nothing else can be done without the database.
          this.onError(err);
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.writing = null;
    }
  }

  private async writeWithRetry(records: AttemptRecord[]): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await recordAttempts(this.db, records);
        return;
      } catch (err) {
        if (tries >= 3) throw err;
        await new Promise((r) => setTimeout(r, 200 * tries));
      }
    }
  }
}
