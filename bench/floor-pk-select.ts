// Floor 2: bare Fastify plus one primary-key SELECT per request on the same kind of database as
// the service. `GET /` picks a random id among 1000 rows and returns the row as JSON.
//   PGlite (default): its own database in a fresh temp dir, opened like the service opens its own.
//   PostgreSQL (FLOOR_DATABASE_URL set): a table in that database (one of its own, so its backends'
//   CPU can be told from the service's), node-postgres pool of 10 that keeps its connections: the
//   process stays up while other scenarios run, and reconnecting must not land in its next round.
// Idle, it does nothing at all (no timers): it does not compete with the scenarios run meanwhile.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import { openPGlite } from '../src/db/pglite.js';

const ROWS = 1000;
const TABLE = 'bench_floor_items';
const CREATE = `CREATE TABLE IF NOT EXISTS ${TABLE} (id integer PRIMARY KEY, name text NOT NULL, price_minor bigint NOT NULL, created_at timestamptz NOT NULL);
  INSERT INTO ${TABLE} SELECT g, 'item ' || g, g * 100, now() FROM generate_series(1, ${ROWS}) g ON CONFLICT DO NOTHING;
  ANALYZE ${TABLE};`;
const SELECT = `SELECT id, name, price_minor, created_at FROM ${TABLE} WHERE id = $1`;

type Query = (sql: string, params: unknown[]) => Promise<{ rows: any[] }>;

let query: Query;
let close: () => Promise<void>;
const url = process.env.FLOOR_DATABASE_URL?.trim();
if (url) {
  const pool = new pg.Pool({ connectionString: url, max: 10, idleTimeoutMillis: 0, application_name: 'svc-bench-floor-pk' });
  pool.on('error', () => {});
  await pool.query(CREATE);
  query = (sql, params) => pool.query(sql, params);
  close = () => pool.end();
} else {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-floor-'));
  const db = await openPGlite({ dataDir: join(dir, 'pgdata') });
  await db.exec(CREATE);
  query = (sql, params) => db.query(sql, params);
  close = async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  };
}

const app = Fastify({ logger: false });
app.get('/', async () => {
  const id = 1 + Math.floor(Math.random() * ROWS);
  const { rows } = await query(SELECT, [id]);
  return { item: rows[0] };
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void app.close().then(close).then(() => process.exit(0)));
}
