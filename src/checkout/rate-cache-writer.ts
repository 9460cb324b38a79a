// Fresh shipping app answers reach the shared cache table (C15.3) behind the quote, never in its
// way (src/db/batch-writer.ts): the quote remembers its answers in this process's memo
// (rate-memo.ts) at once and answers the buyer as soon as the apps have; the writer writes what has
// gathered from every quote in one statement, at most 50 ms later (or at once past 500 answers).
// Under load that is one round trip for many quotes rather than one awaited per quote (issue 12's
// `rates-apps`: the awaited write was a third of the quote's CPU).
//
// Meanwhile another process may miss the table for those few milliseconds and ask the app again:
// harmless for a cache (the answer it gets is one C15.3 allows, and whichever write comes last wins
// the row, as with two quotes at once). A failed write is logged and forgotten: this process still
// answers from its memo, other processes ask the app. A hard kill loses at most 50 ms of answers,
// which the apps are simply asked again.
import type { Db } from '../db/db.js';
import { BatchWriter } from '../db/batch-writer.js';
import type { Logger } from '../platform/logger.js';
import { cacheAnswers, type CachedAnswerRow, type FreshAnswer } from './rate-cache.js';

export class RateCacheWriter {
  /**
   * By (body hash, app): one statement's ON CONFLICT cannot touch a row twice, so a second answer
   * to the same key in one batch replaces the first (the later answer wins, as in the table).
   */
  private readonly batches: BatchWriter<CachedAnswerRow>;

  constructor(db: Db, log: Logger, maxDelayMs?: number) {
    this.batches = new BatchWriter({
      write: (rows) => cacheAnswers(db, rows),
      log,
      failure: 'caching shipping rates failed',
      keyOf: (row) => `${row.bodySha256}:${row.appId}`,
      maxDelayMs,
    });
  }

  /** One quote's fresh answers to the body whose SHA-256 is `bodySha256`. */
  add(bodySha256: string, answers: readonly FreshAnswer[]): void {
    this.batches.add(answers.map((a) => ({ ...a, bodySha256 })));
  }

  /** Writes what has gathered (after any write in progress); resolves when it is written. Never rejects. */
  flush(): Promise<void> {
    return this.batches.flush();
  }

  close(): Promise<void> {
    return this.batches.close();
  }
}
