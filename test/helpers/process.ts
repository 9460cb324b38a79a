// Start the real service (`node --import tsx src/main.ts`, or `npm start` as the README says) as a
// child process for end-to-end tests.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Services still running; a test that failed half-way leaves some, stopped after its file. */
const running = new Set<ServiceProcess>();

export async function stopServices(): Promise<void> {
  await Promise.all([...running].map(async (svc) => {
    if (svc.child.exitCode === null && svc.child.signalCode === null) {
      // npm's group too: killing npm alone would orphan the service under it.
      if (svc.child.spawnargs[0] === 'npm') process.kill(-svc.child.pid!, 'SIGKILL');
      else svc.child.kill('SIGKILL');
    }
    await svc.exited;
  }));
}

// Only what the service needs: the test run's own DATABASE_URL must not leak into the child.
const childEnv = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env });

export function startService(env: Record<string, string>): ServiceProcess {
  return spawnService(process.execPath, ['--import', 'tsx', 'src/main.ts'], env);
}

/**
 * `npm start`, in a process group of its own (detached), so a test can signal npm alone, as a
 * supervisor does, or the whole group, as a terminal's Ctrl-C does.
 */
export function startNpm(env: Record<string, string>): ServiceProcess {
  return spawnService('npm', ['start'], env, { detached: true });
}

function spawnService(command: string, args: string[], env: Record<string, string>, options: SpawnOptions = {}): ServiceProcess {
  const child = spawn(command, args, { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], ...options });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      for (const l of listeners) l();
      resolve({ code, signal });
    }),
  );
  const svc: ServiceProcess = {
    child,
    output: () => out,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(pattern);
          if (m) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(m);
          } else if (child.exitCode !== null) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`service exited (${child.exitCode}) before ${pattern}:\n${out}`));
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${pattern}:\n${out}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
  running.add(svc);
  void exited.then(() => running.delete(svc));
  return svc;
}
