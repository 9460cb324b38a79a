// `npm start`, exactly as the README runs it, stopped the two ways a service is stopped: SIGTERM
// to npm alone (a supervisor, `kill`) and SIGINT to the whole process group (Ctrl-C in a terminal).
// Either way the service shuts down cleanly: npm exits, the port closes, no process is left behind,
// and the data dir's lock is released so the next `npm start` starts (issue 10). Embedded database
// only, as the README's first command.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { commandOf, freePort, processes, startNpm, type ServiceProcess } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';

const onPGlite = !inject('testDatabaseUrl');
// Made only where the tests run: a file whose tests are all skipped runs no teardown to remove it.
const dataDir = onPGlite ? tempDir('svc-npm-start-') : '';

const childrenOf = (pid: number) => processes((p) => p.ppid === pid);

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Started {
  npm: ServiceProcess;
  servicePid: number;
  helpers: number[];
  port: number;
}

async function start(): Promise<Started> {
  const port = await freePort();
  const npm = startNpm({ SVC_DATA_DIR: dataDir, PORT: String(port), SVC_SEED: 'none' });
  await npm.waitFor(/process ready/, 120_000);
  // The lock file names the process holding the database (`pid nonce`, src/db/open.ts): the service itself.
  const servicePid = Number(readFileSync(join(dataDir, 'svc.lock'), 'utf8').split(' ')[0]);
  // `exec` in the script: the service is npm's own child, no shell between that would swallow the
  // signal. `node --import tsx` compiles TypeScript in-process: no second node process, only
  // esbuild's compiler service, which ends when its parent does.
  expect(childrenOf(npm.child.pid!)).toEqual([servicePid]);
  const helpers = childrenOf(servicePid);
  for (const pid of helpers) expect(commandOf(pid)).toMatch(/esbuild/);
  expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  return { npm, servicePid, helpers, port };
}

async function expectStoppedCleanly({ npm, servicePid, helpers, port }: Started) {
  expect(await npm.exited).toEqual({ code: 0, signal: null });
  expect(isRunning(servicePid)).toBe(false);
  await expect.poll(() => helpers.filter(isRunning), { timeout: 5_000 }).toEqual([]);
  await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  // Released by the clean close of the database, not merely taken over as a dead process's.
  expect(existsSync(join(dataDir, 'svc.lock'))).toBe(false);
}

describe.runIf(onPGlite)('npm start and signals', () => {
  it('SIGTERM to npm stops the service gracefully', async () => {
    const svc = await start();
    process.kill(svc.npm.child.pid!, 'SIGTERM');
    await expectStoppedCleanly(svc);
  }, 180_000);

  it('the next npm start on the data dir starts; Ctrl-C (SIGINT to the group) stops it gracefully', async () => {
    const svc = await start();
    process.kill(-svc.npm.child.pid!, 'SIGINT');
    await expectStoppedCleanly(svc);
    const again = await start();
    process.kill(again.npm.child.pid!, 'SIGTERM');
    await expectStoppedCleanly(again);
  }, 240_000);
});
