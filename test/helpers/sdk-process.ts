// An app's other process, for tests of what the app SDK does across processes (a shared token
// file, its lock files): a TypeScript body run in a new Node process with the SDK as `sdk`.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './process.js';
import { tempDir } from './temp-dirs.js';

/** Runs `body` (TypeScript, top-level await) in a new Node process with the SDK as `sdk`; its exit code and output. */
export function runSdkProcess(body: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const script = join(tempDir('svc-sdk-process-'), 'script.mts');
  writeFileSync(script, `import * as sdk from ${JSON.stringify(join(ROOT, 'packages/app-sdk/src/index.ts'))};\n${body}`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--conditions=svc-source', '--import', 'tsx', script, ...args], { cwd: ROOT });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}
