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
