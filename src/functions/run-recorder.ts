// Run records (C11.5) are written behind the checkout, never in its way: each checkout step hands
// its runs to the recorder and answers at once; the recorder writes what has gathered in one
// transaction (src/db/batch-writer.ts: at most RUN_RECORD_DELAY_MS later, or at once past 500
// steps). A hard kill loses at most those 10 ms of records (docs/decisions.md). What it keeps
// meanwhile is each step's runs already encoded as COPY lines (function-runs.repo.ts `runLines`),
// not the runs.
import type { Db } from '../db/db.js';
import { BatchWriter } from '../db/batch-writer.js';
import type { Logger } from '../platform/logger.js';
import { runLines, writeRunLines, type NewRun, type RunLines } from './function-runs.repo.js';

/**
 * 10 ms, not the batch writers' 50: under load a batch every 50 ms was several hundred runs,
 * and its write a burst of PostgreSQL work on cores the checkouts share. In alternating bench runs
 * (three delivery functions, 32 connections) the p99 was 10.6-13.3 ms at 10 ms against 14.1-15.2 ms
 * at 50 (5 ms: 13.9-14.7, 20 ms: 12.9-14.2); database CPU per quote rose by a few per cent.
 */
export const RUN_RECORD_DELAY_MS = 10;

export class RunRecorder {
  private readonly writer: BatchWriter<RunLines>;

  constructor(db: Db, log: Logger) {
    this.writer = new BatchWriter({ write: (lines) => writeRunLines(db, lines), log, failure: 'function runs could not be recorded', maxDelayMs: RUN_RECORD_DELAY_MS });
  }

  /** One checkout step's runs (a target's), recorded together. */
  add(runs: readonly NewRun[]): void {
    if (runs.length) this.writer.add([runLines(runs)]);
  }

  /** Writes what has gathered; resolves when it is written. Never rejects. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}
