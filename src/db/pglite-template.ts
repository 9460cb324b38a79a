// A pristine embedded cluster, made once at install time (`npm ci` runs `prepare`), so the first
// start on an empty data dir copies ~40 MB of files instead of running PGlite's initdb in
// WebAssembly (3-4 s of CPU). The template holds only what initdb writes: no schema, no data;
// migrations and demo data still run at first start. It is keyed by the PGlite version and lives
// under node_modules/.cache, so it is never committed and is rebuilt when PGlite changes. Without
// it (a different install path), the first start simply runs initdb.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  const pkg = join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json');
  return JSON.parse(readFileSync(pkg, 'utf8')).version as string;
}

export function templateDir(): string {
  return join(ROOT, 'node_modules', '.cache', 'svc', `pglite-${pgliteVersion()}-template`);
}

const isEmptyDir = (dir: string) => !existsSync(dir) || readdirSync(dir).length === 0;

/** Lay the template into an empty data dir. False when there is no template (initdb will run). */
export function seedDataDirFromTemplate(dataDir: string): boolean {
  const template = templateDir();
  if (!isEmptyDir(dataDir) || !existsSync(join(template, 'PG_VERSION'))) return false;
  mkdirSync(dirname(dataDir), { recursive: true });
  cpSync(template, dataDir, { recursive: true });
  return true;
}

/** Build the template (idempotent): initdb into a temp dir, close cleanly, then move into place. */
export async function buildTemplate(): Promise<string> {
  const target = templateDir();
  if (existsSync(join(target, 'PG_VERSION'))) return target;
  const staging = `${target}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(dirname(staging), { recursive: true });
  const pg = await PGlite.create({ dataDir: staging });
  await pg.close();
  rmSync(join(staging, 'postmaster.pid'), { force: true });
  rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  return target;
}
