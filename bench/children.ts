// Child processes of the benchmark: spawn, wait for an HTTP readiness URL, stop, and make sure none
// survives the benchmark (normal end, error, SIGINT/SIGTERM). Only processes started here are
// signalled, each by its own pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export interface Child {
  name: string;
  proc: ChildProcess;
  /** Last output lines of the child (stdout and stderr interleaved), for error reports. */
  output(): string;
  exited: Promise<number | null>;
  startedAt: number;
}

const live = new Set<Child>();

/** A port the OS just handed out (free unless something else grabs it in between). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string; echo?: boolean } = {}): Child {
  const startedAt = performance.now();
  const proc = spawn(process.execPath, args, { env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) {
      if (!line) continue;
      lines.push(line);
      if (lines.length > 200) lines.shift();
      if (options.echo) console.log(`  [${name}] ${line}`);
    }
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    proc.once('exit', (code, signal) => {
      live.delete(child);
      resolve(code ?? (signal ? 128 : null));
    });
    proc.once('error', () => {
      live.delete(child);
      resolve(null);
    });
  });
  const child: Child = { name, proc, output: () => lines.join('\n'), exited, startedAt };
  live.add(child);
  return child;
}

/**
 * Poll `url` until it answers 200; resolves with milliseconds since the child was spawned.
 * Rejects if the child exits first or the timeout passes.
 */
export async function waitReady(child: Child, url: string, timeoutMs = 60_000): Promise<number> {
  let exitCode: number | null | undefined;
  void child.exited.then((code) => (exitCode = code ?? -1));
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`${child.name} exited (code ${exitCode}) before it was ready:\n${child.output()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - child.startedAt;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${child.name} not ready at ${url} within ${timeoutMs} ms:\n${child.output()}`);
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
export async function stopChild(child: Child, graceMs = 20_000): Promise<number | null> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return child.proc.exitCode;
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), graceMs);
  try {
    return await child.exited;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * CPU time (user + system, ms) a process has used so far, from /proc (Linux; null elsewhere).
 * Threads included: for PGlite that is the whole database too; a PostgreSQL server's own
 * processes are not counted (bench/database.ts counts them when the server runs on this machine).
 */
export function cpuTimeMs(pid: number): number | null {
  return processCpu(pid)?.cpuMs ?? null;
}

/** A process's command name and CPU time so far (ms), or null when /proc has no such process. */
export function processCpu(pid: number): { comm: string; cpuMs: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at field 3.
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    return { comm, cpuMs: (ticks * 1000) / CLOCK_TICKS };
  } catch {
    return null;
  }
}
/**
 * CPU time (ms) the whole machine has spent busy so far, all cores together (Linux /proc/stat;
 * null elsewhere): what the bench subtracts its own processes from to see other load.
 */
export function machineBusyMs(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return ((user + nice + system + irq + softirq + (steal || 0)) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}
const CLOCK_TICKS = 100; // USER_HZ: 100 on every Linux architecture Node supports

export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((c) => stopChild(c, 5_000)));
}

// Last resort: whatever is still running when this process exits is killed outright.
process.on('exit', () => {
  for (const c of live) c.proc.kill('SIGKILL');
});
