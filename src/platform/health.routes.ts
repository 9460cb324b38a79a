// C1.4: liveness and readiness.
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { migrationsApplied } from '../db/migrate.js';

export async function healthRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  app.get('/healthz', { schema: { tags: ['health'], summary: 'The process runs' } }, async () => ({ status: 'ok' }));

  let ready = false;
  app.get('/readyz', { schema: { tags: ['health'], summary: 'The database answers and migrations are applied' } }, async (_request, reply) => {
    try {
      // Once migrations are in, only the database's answer can change.
      if (ready) await deps.db.query('SELECT 1');
      else ready = await migrationsApplied(deps.db);
      if (ready) return { status: 'ready' };
    } catch {
      ready = false;
    }
    return reply.code(503).send({ status: 'unavailable' });
  });
}
