// C1.4: liveness and readiness, on every process's port (api, all, and worker: src/platform/health-app.ts).
//
// Readiness covers every dependency the process uses: the database (answering, migrations applied)
// and, on processes that serve the App API with REDIS_URL set, the rate-limit store. Each check is
// bounded by CHECK_TIMEOUT_MS, so a dependency that hangs makes /readyz answer 503 quickly rather
// than time the probe out.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { StringEnum } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import type { Deps } from '../deps.js';
import { migrationsApplied } from '../db/migrate.js';

export const CHECK_TIMEOUT_MS = 2000;

type CheckState = 'ok' | 'unavailable';

function bounded(check: Promise<unknown>): Promise<CheckState> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('unavailable'), CHECK_TIMEOUT_MS);
    check.then(
      (v) => (clearTimeout(timer), resolve(v === false ? 'unavailable' : 'ok')),
      () => (clearTimeout(timer), resolve('unavailable')),
    );
  });
}

const Check = StringEnum(['ok', 'unavailable']);
const Checks = Type.Object({ database: Check, redis: Type.Optional(Check) }, { description: 'redis: on processes that serve the App API with REDIS_URL set' });

export async function healthRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);
  app.get('/healthz', {
    schema: { tags: ['health'], summary: 'The process runs', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }));

  let migrated = false;
  const database = async () => {
    // Once migrations are in, only the database's answer can change.
    if (migrated) await deps.db.query('SELECT 1');
    else migrated = await migrationsApplied(deps.db);
    return migrated;
  };

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'The database answers and migrations are applied; the rate-limit store (Redis) answers, when configured',
        response: {
          200: Type.Object({ status: Type.Literal('ready'), checks: Checks }),
          503: Type.Object({ status: Type.Literal('unavailable'), checks: Checks }, { description: 'A dependency does not answer' }),
        },
      },
    },
    async (_request, reply) => {
      const limiter = deps.limiter;
      const [db, redis] = await Promise.all([bounded(database()), limiter.check ? bounded(limiter.check()) : undefined]);
      const checks = redis === undefined ? { database: db } : { database: db, redis };
      if (db === 'ok' && (redis ?? 'ok') === 'ok') return { status: 'ready' as const, checks };
      return reply.code(503).send({ status: 'unavailable' as const, checks });
    },
  );
}
