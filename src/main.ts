// The service process: configuration, database, HTTP (role api/all), workers (role worker/all),
// the first-run demo data and its banner, and a graceful shutdown on every exit path.
import { loadConfig, ConfigError } from './config.js';
import { startRuntime, type Runtime } from './runtime.js';
import { buildApp } from './app.js';
import { Scheduler } from './jobs/scheduler.js';
import { scheduleWorkers } from './jobs/register-all.js';
import { ensureOperator } from './accounts/accounts.service.js';
import { seedIfEmpty } from './seed/seed.js';
import { printDemoBanner } from './seed/banner.js';
import type { FastifyInstance } from 'fastify';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const problem of err.problems) console.error(`Configuration error: ${problem}`);
      process.exit(2);
    }
    throw err;
  }

  const runtime: Runtime = await startRuntime(config);
  const { deps } = runtime;
  let app: FastifyInstance | null = null;
  let scheduler: Scheduler | null = null;
  let closing: Promise<void> | null = null;

  // One shutdown, whichever path asks first: stop accepting, finish in-flight requests and jobs,
  // then close the database (PGlite needs a clean close).
  const shutdown = (reason: string, code = 0) => {
    closing ??= (async () => {
      const force = setTimeout(() => process.exit(code || 1), 15_000);
      force.unref();
      try {
        await app?.close();
        await scheduler?.stop();
        await runtime.close();
      } catch (err) {
        console.error(`error during shutdown (${reason}):`, err);
        code ||= 1;
      }
      process.exit(code);
    })();
    return closing;
  };
  // `on`, not `once`: Ctrl-C under `npm start` delivers SIGINT twice (the terminal's, and npm's
  // forwarded copy), and a second one without a listener would kill the process mid-shutdown.
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('uncaughtException', (err) => {
    console.error('uncaught exception:', err);
    void shutdown('uncaughtException', 1);
  });
  process.on('unhandledRejection', (err) => {
    console.error('unhandled rejection:', err);
    void shutdown('unhandledRejection', 1);
  });

  if (config.adminEmail && config.adminPassword) await ensureOperator(deps, config.adminEmail, config.adminPassword);
  await seedIfEmpty(deps);

  if (config.role !== 'worker') {
    app = await buildApp(deps, { logger: { level: config.logLevel } });
    await app.listen({ port: config.port, host: config.host });
  }
  if (config.role !== 'api') {
    scheduler = new Scheduler((task, err) => console.error(`background task ${task} failed:`, err));
    scheduleWorkers(deps, scheduler);
  }

  const where = config.databaseUrl ? 'PostgreSQL' : `embedded PostgreSQL (PGlite) in ${config.dataDir}`;
  console.log(`svc ${config.role} process ready${app ? ` at ${config.baseUrl}` : ''} on ${where}`);
  // Only once listening, and on every development start: a start that failed after loading the
  // demo (port taken) printed nothing, and the next one shows it all.
  if (app) await printDemoBanner(deps);
}

main().catch((err) => {
  console.error('failed to start:', err);
  process.exit(1);
});
