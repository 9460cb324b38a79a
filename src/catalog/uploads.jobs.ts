// Deleting the store uploads that changes released (upload-references.ts, `releaseUploads`): a file
// goes once UPLOAD_RELEASE_GRACE_MS have passed on the service clock since its last release and
// nothing of its store names it. Every minute on a worker (an `all` process, the default `npm start`,
// included) and on demand through C12.2 (`upload-purge`). Two workers never take the same release
// (SKIP LOCKED), and deleting a file that is already gone is no error, so runs may overlap.
import { join } from 'node:path';
import type { Deps } from '../deps.js';
import type { Scheduler } from '../jobs/scheduler.js';
import { referencedUploadNames, storeUploadDir } from './upload-references.js';
import { discard, uploadsRoot } from './uploads.js';

export const UPLOAD_PURGE_JOB = 'upload-purge';
/**
 * Longer than any request's transaction by far: a write that read an upload's URL before its last
 * reference was dropped, and copies it into another field, has committed (and is seen) or given up
 * by then.
 */
export const UPLOAD_RELEASE_GRACE_MS = 5 * 60_000;
const BATCH = 100;

export async function purgeReleasedUploads(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<{ processed: number }> {
  const due = new Date(deps.clock.now().getTime() - UPLOAD_RELEASE_GRACE_MS);
  let processed = 0;
  for (;;) {
    const handled = await deps.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ store_id: string; name: string }>(
        `SELECT store_id, name FROM upload_releases WHERE released_at <= $1
          ORDER BY released_at, store_id, name LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [due, BATCH],
      );
      const byStore = new Map<string, string[]>();
      for (const r of rows) {
        const names = byStore.get(r.store_id);
        if (names) names.push(r.name);
        else byStore.set(r.store_id, [r.name]);
      }
      for (const [storeId, names] of byStore) {
        const used = await referencedUploadNames(tx, storeId, names);
        await tx.query('DELETE FROM upload_releases WHERE store_id = $1 AND name = ANY($2::text[])', [storeId, names]);
        // Deleted before the commit: should the commit fail, the release is still there and the
        // next run checks again (the file being gone already is no error). After it, a crash in
        // between would leave the file on disk for ever.
        for (const name of names) {
          if (!used.has(name)) await discard(join(uploadsRoot(deps.config), ...storeUploadDir(storeId), name));
        }
      }
      return rows.length;
    });
    processed += handled;
    if (handled < BATCH) return { processed };
  }
}

export function registerUploadJobs(deps: Deps): void {
  deps.jobs.register(UPLOAD_PURGE_JOB, () => purgeReleasedUploads(deps));
}

export function scheduleUploadWorkers(deps: Deps, scheduler: Scheduler): void {
  scheduler.every(UPLOAD_PURGE_JOB, 60_000, () => deps.jobs.run(UPLOAD_PURGE_JOB));
}
