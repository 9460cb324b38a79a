// Run records (C11.5) are written behind the checkout, never in its way: each checkout step hands
// its runs to the recorder and answers at once; the recorder writes what has gathered in one
// transaction (src/db/batch-writer.ts: at most 50 ms later, or at once past 500 steps). A hard
// kill loses at most those 50 ms of records (docs/decisions.md). What it keeps meanwhile is each
// step's runs already encoded as COPY lines (function-runs.repo.ts `runLines`), not the runs.
import type { Db } from '../db/db.js';
import { BatchWriter } from '../db/batch-writer.js';
import type { Logger } from '../platform/logger.js';
import { runLines, writeRunLines, type NewRun, type RunLines } from './function-runs.repo.js';

export class RunRecorder {
  private readonly writer: BatchWriter<RunLines>;

  constructor(db: Db, log: Logger) {
    this.writer = new BatchWriter({ write: (lines) => writeRunLines(db, lines), log, failure: 'function runs could not be recorded' });
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
