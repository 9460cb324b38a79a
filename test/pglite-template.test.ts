// The install-time template of the embedded database (src/db/pglite-template.ts): pristine (what
// initdb writes, nothing of ours), used only for an empty data dir.
import { writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildTemplate, seedDataDirFromTemplate } from '../src/db/pglite-template.js';
import { openPGlite } from '../src/db/pglite.js';
import { migrate, loadMigrations } from '../src/db/migrate.js';
import { tempDir } from './helpers/temp-dirs.js';

const dir = tempDir('svc-template-');

describe('embedded database template', () => {
  it('holds no schema of ours; a data dir made from it migrates like a fresh one', async () => {
    await buildTemplate();
    const dataDir = join(dir, 'pgdata');
    expect(seedDataDirFromTemplate(dataDir)).toBe(true);
    const db = await openPGlite({ dataDir });
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`);
    expect(rows[0].n).toBe(0);
    expect(await migrate(db)).toBe(loadMigrations().length);
    await db.close();
  }, 60_000);

  it('never touches a data dir that has files', () => {
    const other = tempDir('svc-template-used-');
    writeFileSync(join(other, 'keep.txt'), 'x');
    expect(seedDataDirFromTemplate(other)).toBe(false);
    expect(readdirSync(other)).toEqual(['keep.txt']);
  });
});
