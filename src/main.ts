// The service process: configuration, database, HTTP (the service on role api/all; health and metrics
// only on role worker), workers (role worker/all), the first-run demo data, and a graceful shutdown.
import { loadConfig, ConfigError } from './config.js';
import { startRuntime, type Runtime } from './runtime.js';
import { buildApp } from './app.js';
import { Scheduler } from './jobs/scheduler.js';
import { scheduleWorkers } from './jobs/register-all.js';
import { ensureOperator } from './accounts/accounts.service.js';
import { seedIfEmpty } from './seed/seed.js';
import { printDemoBanner } from './seed/banner.js';
import { createLogger, type Logger } from './platform/logger.js';
import { buildHealthApp } from './platform/health-app.js';
import type { FastifyInstance } from 'fastify';
import { DataDirInUseError } from './db/open.js';
import { maskUrl } from './config/refusal.js';

/** The root logger, once the configuration is read (before that, errors go to stderr as text). */
let log: Logger | null = null;

/**
 * The signals that stop the service gracefully: SIGTERM (supervisors, `kill`), SIGINT (Ctrl-C) and
 * SIGHUP (the terminal closed). SIGHUP is not a reload: the configuration is read once, whole,
 * at start; its default would kill the process on the spot (Node resets even an inherited
 * `nohup`), with requests dropped and the embedded database left open.
 */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
/** The first stop signal received while the service was still starting. */
let stopAsked: NodeJS.Signals | null = null;
/**
 * How long a stop asked during start-up waits for the step under way to end, as long as a shutdown
 * may take (main's `shutdown`). A step can hang for ever (a database address that accepts the
 * connection and never answers: pg has no connect timeout), and the process would then hear no stop
 * signal at all but SIGKILL.
 */
const START_STOP_GRACE_MS = 15_000;
let startStopGrace: NodeJS.Timeout | null = null;
/** What a stop signal does: during start-up, noted (see main); once started, the shutdown. */
let onStop = (signal: NodeJS.Signals) => {
  if (stopAsked) return;
  stopAsked = signal;
  startStopGrace = setTimeout(() => {
    console.error(`stopping: the start-up step under way did not end within 15 s of ${signal}; exiting without closing the rest`);
    process.exit(1);
  }, START_STOP_GRACE_MS);
  startStopGrace.unref();
};
// Listened to from the first moment, not only once started: a supervisor's SIGTERM during a long
// start (the migrations, the demo's load) used to kill the process mid-way, the database unclosed.
// `on`, not `once`: Ctrl-C under `npm start` delivers SIGINT twice (the terminal's, and npm's
// forwarded copy), and a second one without a listener would kill the process mid-shutdown.
for (const signal of STOP_SIGNALS) process.on(signal, () => onStop(signal));

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

  const logger = (log = createLogger({ level: config.logLevel }));
  let runtime: Runtime;
  try {
    runtime = await startRuntime(config, { log: logger });
  } catch (err) {
    // A variable found wrong only once the database is open (SVC_SECRET against its data): said as
    // any configuration error is (the runtime closed the database).
    if (err instanceof ConfigError) {
      for (const problem of err.problems) console.error(`Configuration error: ${problem}`);
      process.exit(2);
    }
    throw databaseProblem(err, config);
  }
  const { deps } = runtime;
  let app: FastifyInstance | null = null;
  let scheduler: Scheduler | null = null;
  let closing: Promise<void> | null = null;

  // One shutdown, whichever path asks first: stop accepting, finish in-flight requests and jobs,
  // then close the database (PGlite needs a clean close).
  const shutdown = (reason: string, code = 0) => {
    closing ??= (async () => {
      if (startStopGrace) clearTimeout(startStopGrace); // the shutdown has a grace of its own
      const force = setTimeout(() => {
        logger.error({ reason }, 'shutdown took over 15 s: exiting without closing the rest');
        process.exit(code || 1);
      }, 15_000);
      force.unref();
      // A keep-alive connection whose request was in flight when closing began goes idle only once
      // it is answered; Fastify closes the connections idle at the start, and the server's close
      // would wait for the others until the force exit. So idle ones are closed as they appear.
      const reap = setInterval(() => app?.server.closeIdleConnections(), 100);
      try {
        try {
          await app?.close();
        } finally {
          clearInterval(reap);
        }
        await scheduler?.stop();
        await runtime.close();
      } catch (err) {
        logger.error({ err, reason }, 'error during shutdown');
        code ||= 1;
      }
      process.exit(code);
    })();
    return closing;
  };
  // A stop asked during start-up waits for the step under way to end (the migrations, the demo's
  // load: each of their transactions commits whole or not at all, and the demo's load resumes at
  // the next start anyway), then the process shuts down as it would once started: database
  // closed, exit 0. Checked between the steps below.
  const stopBeforeReady = () => {
    if (!stopAsked) return null;
    logger.info({ signal: stopAsked }, 'stopping: asked to while starting');
    return shutdown(stopAsked);
  };
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    void shutdown('uncaughtException', 1);
  });
  process.on('unhandledRejection', (err) => {
    logger.fatal({ err }, 'unhandled rejection');
    void shutdown('unhandledRejection', 1);
  });

  try {
    if (stopBeforeReady()) return;
    if (config.adminEmail && config.adminPassword) await ensureOperator(deps, config.adminEmail, config.adminPassword);
    if (stopBeforeReady()) return;
    await seedIfEmpty(deps);
    if (stopBeforeReady()) return;
    // Every role listens: api and all for the service, worker for /healthz, /readyz and /metrics only.
    app = config.role === 'worker' ? await buildHealthApp(deps) : await buildApp(deps);
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // The database is open (and, embedded, locked): close it on the way out, so the next start
    // finds a clean data dir, and say what went wrong in one line.
    console.error(`failed to start: ${startProblem(err, config)}`);
    logger.debug({ err }, 'failed to start');
    return shutdown('failed to start', 1);
  }
  if (stopBeforeReady()) return;
  // Started: a stop signal now shuts down at once (in-flight requests are finished).
  onStop = (signal) => void shutdown(signal);
  if (config.role !== 'api') {
    scheduler = new Scheduler(deps.log, deps.metrics);
    scheduleWorkers(deps, scheduler);
  }

  const where = config.databaseUrl ? 'PostgreSQL' : `embedded PostgreSQL (PGlite) in ${config.dataDir}`;
  console.log(`svc ${config.role} process ready${config.role !== 'worker' ? ` at ${config.baseUrl}` : ''} on ${where}`);
  // Only once listening, and on every development start: a start that failed after loading the
  // demo (port taken) printed nothing, and the next one shows it all.
  if (config.role !== 'worker') await printDemoBanner(deps);
}

/** One line for the operational failures a start can meet; the error's own message otherwise. */
function startProblem(err: unknown, config: { port: number; host: string }): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'EADDRINUSE') return `${config.host}:${config.port} is in use (EADDRINUSE); stop what listens there or set PORT`;
  if (e?.code === 'EADDRNOTAVAIL') return `HOST ${config.host} is not an address of this machine (EADDRNOTAVAIL)`;
  if (e?.code === 'EACCES') return `no permission to listen on ${config.host}:${config.port} (EACCES)`;
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return `HOST ${config.host} does not resolve to an address of this machine (${e.code})`;
  return e instanceof Error ? e.message : String(err);
}

/**
 * An operational failure of the runtime's start (a refused connection, a database that does not
 * exist, a data dir it cannot write) is the database's, the one thing it opens before it is up:
 * said naming the variable that chose it (DATABASE_URL, its password masked, or SVC_DATA_DIR), as
 * a configuration error names its variable. Anything else goes on as it was.
 */
function databaseProblem(err: unknown, config: { databaseUrl: string | null; dataDir: string }): unknown {
  const e = err as NodeJS.ErrnoException;
  if (!(e instanceof Error) || typeof e.code !== 'string') return err;
  const where = config.databaseUrl ? `DATABASE_URL=${JSON.stringify(maskUrl(config.databaseUrl))}` : `SVC_DATA_DIR=${JSON.stringify(config.dataDir)}`;
  return Object.assign(new Error(`the database (${where}): ${e.message}`), { code: e.code });
}

main().catch((err) => {
  // An operational failure (the data dir in use, the database unreachable) is one line; anything
  // else is a bug, logged with its stack.
  if (err instanceof DataDirInUseError || typeof (err as NodeJS.ErrnoException)?.code === 'string') {
    console.error(`failed to start: ${(err as Error).message}`);
  } else if (log) log.fatal({ err }, 'failed to start');
  else console.error('failed to start:', err);
  process.exit(1);
});
