// Run records (C11.5) are written behind the checkout, never in its way: each checkout step hands
// its runs to the recorder and answers at once; the recorder writes what has gathered in one
// statement (src/db/batch-writer.ts: at most 50 ms later, or at once past 500 runs). A hard kill
// loses at most those 50 ms of records (docs/decisions.md).
import type { Db } from '../db/db.js';
import { BatchWriter } from '../db/batch-writer.js';
import type { Logger } from '../platform/logger.js';
import { insertRuns, type NewRun } from './function-runs.repo.js';

export class RunRecorder extends BatchWriter<NewRun> {
  constructor(db: Db, log: Logger) {
    super({ write: (runs) => insertRuns(db, runs), log, failure: 'function runs could not be recorded' });
  }
}
