// Temporary directories made by tests. Each one is removed when its test file ends, passed or
// failed (test/helpers/file-teardown.ts, a Vitest setup file), or when the process exits; the
// global setup checks that a run leaves none behind.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();
let exitHook = false;

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  if (!exitHook) {
    // For code outside a test file's lifecycle (the benchmark's fixtures): a normal exit still cleans.
    exitHook = true;
    process.once('exit', removeTempDirs);
  }
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  made.delete(dir);
}

export function removeTempDirs(): void {
  for (const dir of [...made]) removeTempDir(dir);
}
