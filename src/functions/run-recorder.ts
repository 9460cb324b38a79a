// Run records (C11.5) are written behind the checkout, never in its way: each checkout step hands
// its runs to the recorder and answers at once; the recorder writes what has gathered in one
// statement, at most MAX_DELAY_MS later (or at once past MAX_BATCH runs). Under load that is one
// insert and one commit for many checkouts rather than one per checkout. What is still gathered
// when the process stops is written by close(); a hard kill loses at most MAX_DELAY_MS of records
// (docs/decisions.md).
import type { Db } from '../db/db.js';
import type { Logger } from '../platform/logger.js';
import { insertRuns, type NewRun } from './function-runs.repo.js';

const MAX_DELAY_MS = 50;
const MAX_BATCH = 500;

export class RunRecorder {
  private gathered: NewRun[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly db: Db, private readonly log: Logger) {}

  add(runs: readonly NewRun[]): void {
    if (!runs.length) return;
    this.gathered.push(...runs);
    if (this.gathered.length >= MAX_BATCH) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), MAX_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Writes what has gathered (after any write in progress); resolves when it is written. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.gathered;
    this.gathered = [];
    if (batch.length) {
      this.writing = this.writing.then(async () => {
        try {
          for (let i = 0; i < batch.length; i += MAX_BATCH) await insertRuns(this.db, batch.slice(i, i + MAX_BATCH));
        } catch (err) {
          this.log.error({ err, runs: batch.length }, 'function runs could not be recorded');
        }
      });
    }
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
