// Fresh shipping app answers reach the shared cache table (C15.3) behind the quote, never in its
// way (modelled on src/functions/run-recorder.ts): the quote remembers its answers in this
// process's memo (rate-memo.ts) at once and answers the buyer as soon as the apps have; the writer
// writes what has gathered from every quote in one statement, at most MAX_DELAY_MS later (or at
// once past MAX_BATCH answers). Under load that is one round trip for many quotes rather than one
// awaited per quote (issue 12's `rates-apps`: the awaited write was a third of the quote's CPU).
//
// Meanwhile another process may miss the table for those few milliseconds and ask the app again:
// harmless for a cache (the answer it gets is one C15.3 allows, and whichever write comes last wins
// the row, as with two quotes at once). A failed write is logged and forgotten: this process still answers
// from its memo, other processes ask the app. What is gathered when the process stops is written by
// close(); a hard kill loses at most MAX_DELAY_MS of answers, which the apps are simply asked again.
import type { Db } from '../db/db.js';
import type { Logger } from '../platform/logger.js';
import { cacheAnswers, type CachedAnswerRow, type FreshAnswer } from './rate-cache.js';

const MAX_DELAY_MS = 50;
const MAX_BATCH = 500;

export class RateCacheWriter {
  /**
   * By (body hash, app): one statement's ON CONFLICT cannot touch a row twice, so a second answer
   * to the same key in one batch replaces the first (the later answer wins, as in the table).
   */
  private gathered = new Map<string, CachedAnswerRow>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly db: Db, private readonly log: Logger, private readonly maxDelayMs = MAX_DELAY_MS) {}

  /** One quote's fresh answers to the body whose SHA-256 is `bodySha256`. */
  add(bodySha256: string, answers: readonly FreshAnswer[]): void {
    if (!answers.length) return;
    for (const a of answers) {
      this.gathered.set(`${bodySha256}:${a.appId}`, { ...a, bodySha256 });
    }
    if (this.gathered.size >= MAX_BATCH) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.maxDelayMs);
      this.timer.unref();
    }
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
          for (let i = 0; i < batch.length; i += MAX_BATCH) await cacheAnswers(this.db, batch.slice(i, i + MAX_BATCH));
        } catch (err) {
          this.log.error({ err, answers: batch.length }, 'caching shipping rates failed');
        }
      });
    }
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
