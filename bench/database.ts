// Scratch databases on the PostgreSQL server named by DATABASE_URL: created for one benchmark run
// and dropped at its end.
import pg from 'pg';

export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(serverUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** CREATE DATABASE <name>; resolves to the new database's URL. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
  await admin(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  return databaseUrl(serverUrl, name);
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
  await admin(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** Server version and a few settings that matter for the figures. */
export async function describeServer(serverUrl: string): Promise<string> {
  return admin(serverUrl, async (c) => {
    const { rows } = await c.query(`SELECT current_setting('server_version') AS v, current_setting('max_connections') AS mc,
      current_setting('synchronous_commit') AS sc, current_setting('shared_buffers') AS sb`);
    const r = rows[0];
    return `PostgreSQL ${r.v} (max_connections ${r.mc}, shared_buffers ${r.sb}, synchronous_commit ${r.sc})`;
  });
}

/**
 * CPU time of the PostgreSQL backends serving one database, read from /proc: only when the server
 * runs on this machine (the backends' pids are then visible here, as `postgres` processes); null
 * otherwise. One admin connection, kept for the run (its own backend is left out).
 */
export class BackendCpu {
  private constructor(private readonly client: pg.Client, private readonly readCpu: (pid: number) => { comm: string; cpuMs: number } | null) {}

  static async open(serverUrl: string, readCpu: (pid: number) => { comm: string; cpuMs: number } | null): Promise<BackendCpu> {
    const client = new pg.Client({ connectionString: serverUrl, application_name: 'svc-bench-cpu-probe' });
    client.on('error', () => {});
    await client.connect();
    return new BackendCpu(client, readCpu);
  }

  /** CPU ms so far of each backend connected to `database`, by pid; null when they are not on this machine. */
  async snapshot(database: string): Promise<Map<number, number> | null> {
    const { rows } = await this.client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    const out = new Map<number, number>();
    for (const { pid } of rows) {
      const p = this.readCpu(pid);
      if (!p) continue; // gone since, or not on this machine
      if (!p.comm.startsWith('postgres')) return null; // a pid of another machine's (or namespace's) numbering
      out.set(pid, p.cpuMs);
    }
    return rows.length > 0 && out.size === 0 ? null : out;
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}

/**
 * CPU ms the backends used between two snapshots: backends present in both count their
 * difference, backends that connected in between count all of theirs (their connection set-up is
 * part of the load), backends that left in between are lost (rare: the pools keep theirs).
 */
export function backendCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, cpu] of after) ms += cpu - (before.get(pid) ?? 0);
  return ms;
}
