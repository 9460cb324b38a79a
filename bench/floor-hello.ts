// Floor 1: bare Fastify, no logger, no hooks: `GET /` -> {hello:'world'}. What this machine's
// Node + Fastify + HTTP stack can do at all; the 404-after-auth scenario is compared with it.
// Idle, it does nothing (no timers): it stays up for the whole run without competing for CPU.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void app.close().then(() => process.exit(0)));
}
