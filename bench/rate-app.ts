// The shipping apps' rate endpoint for issue 12's scenarios, in a process of its own: it stands for
// apps on other machines, so its timers must not wait behind the load generator's work (in the
// bench's own process, its 50 ms answers came at 61 ms at the p99, counted against the service).
// `POST` anything: two services after RATE_APP_DELAY_MS, the same for every app; `GET /`: ready.
import { createServer } from 'node:http';

const delayMs = Number(process.env.RATE_APP_DELAY_MS ?? 50);
const reply = JSON.stringify({
  rates: [
    { service_name: 'Ground', service_code: 'ground', total_price: '899', currency: 'USD', description: '3 to 5 business days' },
    { service_name: 'Express', service_code: 'express', total_price: 1999, currency: 'USD' },
  ],
});

const server = createServer((req, res) => {
  if (req.method === 'GET') return void res.end('ready');
  req.resume();
  req.on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(reply), delayMs));
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
