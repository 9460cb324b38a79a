// An app on Fastify with @svc/app-sdk. Signatures are over the raw bytes, so the routes that
// receive from the platform take the body as a Buffer: `addContentTypeParser` with
// `parseAs: 'buffer'`, inside a plugin so the app's other routes keep Fastify's JSON parsing.
// `bodyLimit` bounds the body (Fastify answers 413 past it): the SDK's `DEFAULT_MAX_BODY_BYTES`.
//
//   CLIENT_SECRET=... PORT=8788 node --conditions=svc-source --import tsx packages/app-sdk/examples/fastify.ts
//
// (from the repository's root: `--conditions=svc-source` resolves @svc/app-sdk to its sources, as
// there is no built dist/ in the repository; packages/app-sdk/README.md)
//
// Manifest: `extensions.shipping.ratesUrl` = http://<host>:8788/platform/rates, webhooks and
// `gdprUrls` at http://<host>:8788/platform/webhooks.
import Fastify, { type FastifyInstance } from 'fastify';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_BODY_BYTES, parseWebhook, rateReply, refusalStatus } from '@svc/app-sdk';
import { ratesFor } from './rates-table.js';

export function buildApp(options: { clientSecret: string; log?: (line: string) => void }): FastifyInstance {
  const log = options.log ?? ((line: string) => console.log(line));
  // The SDK's bound (8 MiB), not Fastify's 1 MiB default: a webhook body can be larger than any
  // request the platform takes, and a 413 loses it for good (app-api.md Retries: a 4xx is never retried).
  const app = Fastify({ bodyLimit: DEFAULT_MAX_BODY_BYTES });

  app.register(async (platform) => {
    platform.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    platform.post('/rates', async (request, reply) => {
      const message = parseWebhook({ rawBody: request.body as Buffer, headers: request.headers, secret: options.clientSecret });
      if (!message.ok) return reply.code(refusalStatus(message)).send({ error: message.reason });
      if (message.topic !== 'shipping/rates') return reply.code(400).send({ error: `not a rate request: ${message.topic}` });
      // C15.3: 200, `{ rates: [...] }`, JSON.
      return reply.code(200).type('application/json').send(rateReply(ratesFor(message.payload.rate)));
    });

    platform.post('/webhooks', async (request, reply) => {
      const message = parseWebhook({ rawBody: request.body as Buffer, headers: request.headers, secret: options.clientSecret });
      if (!message.ok) return reply.code(refusalStatus(message)).send({ error: message.reason });
      if (message.topic === 'orders/create') {
        const line = message.payload.shipping_lines[0];
        log(`orders/create ${message.payload.name} from ${message.shop}: shipping ${line ? `${line.code} (source ${line.source})` : 'none'}`);
      } else {
        log(`${message.topic} from ${message.shop}`);
      }
      return reply.code(200).send();
    });
  }, { prefix: '/platform' });

  app.get('/health', async () => ({ ok: true })); // outside the plugin: the usual JSON parsing
  return app;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const clientSecret = process.env.CLIENT_SECRET;
  if (!clientSecret) throw new Error('set CLIENT_SECRET (the app\'s client secret)');
  const app = buildApp({ clientSecret });
  const address = await app.listen({ port: Number(process.env.PORT ?? 8788), host: process.env.HOST ?? '127.0.0.1' });
  console.log(`listening on ${address}`);
}
