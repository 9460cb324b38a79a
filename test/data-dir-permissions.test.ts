// The embedded database's files belong to the service's user alone (found in review: a first start
// copied the cluster template's files world-writable, 0666, and the data dir was 0755, so any local
// user could corrupt or read the catalogs). PostgreSQL itself refuses a data directory others may
// enter; here the service closes it (src/db/open.ts). On PGlite only: with DATABASE_URL the
// service has no database files of its own.
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/open.js';
import { tempDir } from './helpers/temp-dirs.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('the data dir and the embedded database (PGlite)', () => {
  it('a new data dir and its database directory are open to their owner only', async () => {
    const dir = join(tempDir('svc-perms-'), 'data');
    const db = await openDatabase(loadConfig({ SVC_DATA_DIR: dir }));
    try {
      expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(modeOf(dir)).toBe(0o700);
      expect(modeOf(join(dir, 'pgdata'))).toBe(0o700);
    } finally {
      await db.close();
    }
  }, 60_000);

  it("an existing database directory others could enter is closed at start; the operator's own data dir is left as it is", async () => {
    const dir = tempDir('svc-perms-old-');
    mkdirSync(join(dir, 'pgdata'), { recursive: true });
    chmodSync(dir, 0o755);
    chmodSync(join(dir, 'pgdata'), 0o777);
    const db = await openDatabase(loadConfig({ SVC_DATA_DIR: dir }));
    try {
      expect(modeOf(join(dir, 'pgdata'))).toBe(0o700);
      expect(modeOf(dir)).toBe(0o755);
    } finally {
      await db.close();
    }
  }, 60_000);
});
