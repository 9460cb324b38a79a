// Start the real service (`node --import tsx src/main.ts`, or `npm start` as the README says) as a
// child process for end-to-end tests.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
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
/** The process groups of `npm start` (see startNpm). */
const npmGroups = new Set<number>();

export async function stopServices(): Promise<void> {
  await Promise.all([...running].map(async (svc) => {
    if (svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGKILL');
    await svc.exited;
  }));
  // A service that `npm start` orphaned (npm gone, the service not) is found by its process group,
  // and killed only when it is this repository's service: a group id can be reused once empty.
  for (const group of npmGroups) {
    for (const pid of processes((p) => p.pgid === group && p.pid !== group)) {
      if (commandOf(pid).includes('src/main.ts') && cwdOf(pid) === ROOT) process.kill(pid, 'SIGKILL');
    }
  }
  npmGroups.clear();
}

interface ProcStat {
  pid: number;
  ppid: number;
  pgid: number;
}

/** Processes of this machine (Linux /proc) that match. */
export function processes(match: (p: ProcStat) => boolean): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // After the command name (in parentheses, may hold spaces): state, ppid, pgrp.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (match({ pid: Number(name), ppid: Number(ppid), pgid: Number(pgid) })) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

export const commandOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
};

/** Whether the process's environment holds `name=value` (inherited by every process it starts). */
export const hasEnv = (pid: number, name: string, value: string): boolean => {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`${name}=${value}`);
  } catch {
    return false;
  }
};

const cwdOf = (pid: number): string => {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return '';
  }
};

// Only what the service needs: the test run's own DATABASE_URL must not leak into the child.
const childEnv = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env });

export function startService(env: Record<string, string>): ServiceProcess {
  return spawnService(process.execPath, ['--import', 'tsx', 'src/main.ts'], env);
}

/** examples/shipping-app (issue 14) as `npm start` in its folder runs it: the SDK from its sources. */
export function startExampleApp(env: Record<string, string>): ServiceProcess {
  return spawnService(process.execPath, ['--conditions=svc-source', '--import', 'tsx', 'examples/shipping-app/src/main.ts'], env);
}

/**
 * `npm start`, in a process group of its own (detached), so a test can signal npm alone, as a
 * supervisor does, or the whole group, as a terminal's Ctrl-C does.
 */
export function startNpm(env: Record<string, string>): ServiceProcess {
  const svc = spawnService('npm', ['start'], env, { detached: true });
  npmGroups.add(svc.child.pid!);
  return svc;
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
