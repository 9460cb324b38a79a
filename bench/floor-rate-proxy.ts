// Floor 3: bare Fastify that, for each request, asks the shipping apps' receiver (bench/rate-app.ts)
// twice in parallel, as a live-rates quote asks two apps: a signed JSON body, two POSTs through the
// service's own outbound client (src/webhooks/http-client.ts: the leanest this project has, undici's
// dispatch), both replies parsed, their rates answered. No database, no validation, no cache.
// What this machine gives at all for "two apps answering in RATE_APP_DELAY_MS" at 32 connections:
// issue 12's `rates-apps` scenario runs in the same rounds with it, as context for its target (the
// slower app + 15 ms), which the floor's own p99 can exceed on a small machine.
// Idle, it does nothing (no timers).
import { createHmac } from 'node:crypto';
import Fastify from 'fastify';
import { WebhookHttp } from '../src/webhooks/http-client.js';

const ratesUrl = process.env.RATES_URL!;
const http = new WebhookHttp(true, 5000, 256);
const secret = 'floor-secret';
let n = 0;

async function ask(body: string): Promise<unknown[]> {
  const res = await http.send(ratesUrl, { 'content-type': 'application/json', 'x-signature': createHmac('sha256', secret).update(body).digest('base64') }, body, { timeoutMs: 5000, keepBytes: 65536 });
  return (JSON.parse(res.responseBody!) as { rates: unknown[] }).rates;
}

const app = Fastify({ logger: false });
app.get('/*', async () => {
  const body = JSON.stringify({ rate: { origin: { country: 'US', postal_code: '97201' }, destination: { country: 'US', postal_code: String(n++) }, items: [{ name: 'Bench Tee', quantity: 1, grams: 0, price: 2500 }], currency: 'USD' } });
  const [a, b] = await Promise.all([ask(body), ask(body)]);
  return { rates: [...a, ...b] };
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void app.close().then(() => http.close()).then(() => process.exit(0)));
}
