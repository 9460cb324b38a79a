// An app on plain `node:http` with @svc/app-sdk: one address receives the platform's rate requests
// and webhooks (the `X-SVC-Topic` header tells them apart). Each is read with a size bound,
// verified over its raw bytes with the app's client secret and parsed into a typed message.
//
//   CLIENT_SECRET=... PORT=8787 node --conditions=svc-source --import tsx packages/app-sdk/examples/node-http.ts
//
// (from the repository's root: `--conditions=svc-source` resolves @svc/app-sdk to its sources, as
// there is no built dist/ in the repository; packages/app-sdk/README.md)
//
// Declare it in the app's manifest: `extensions.shipping.ratesUrl` and `extensions.webhooks[].uri`
// (and the `gdprUrls`) at http://<host>:8787/.
import { createServer, type Server } from 'node:http';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_BODY_BYTES, receiveNodeRequest, sendRates, sendRefusal } from '@svc/app-sdk';
import { ratesFor } from './rates-table.js';

export function createApp(options: { clientSecret: string; log?: (line: string) => void }): Server {
  const log = options.log ?? ((line: string) => console.log(line));
  return createServer(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    // The SDK's bound (8 MiB): a webhook body can be larger than any request the platform takes, and
    // a 413 loses it for good (app-api.md Retries: a 4xx is never retried). Lower it only knowing that.
    const message = await receiveNodeRequest(req, { secret: options.clientSecret, maxBytes: DEFAULT_MAX_BODY_BYTES });
    if (!message.ok) return sendRefusal(res, message); // 401 unsigned or forged, 413 too large, 400 not JSON
    switch (message.topic) {
      case 'shipping/rates':
        return sendRates(res, ratesFor(message.payload.rate)); // 200 { rates: [...] }
      case 'orders/create': {
        const line = message.payload.shipping_lines[0];
        log(`orders/create ${message.payload.name} from ${message.shop}: shipping ${line ? `${line.code} (source ${line.source})` : 'none'}`);
        break;
      }
      case 'customers/data_request':
      case 'customers/redact':
      case 'shop/redact':
        // Acknowledge and complete with acknowledgeGdprRequest / completeGdprRequest (the store's token).
        log(`${message.topic} ${message.gdprRequestId} for shop ${message.payload.shop_domain}`);
        break;
      default:
        log(`${message.topic} from ${message.shop}`);
    }
    res.writeHead(200).end(); // webhooks: any 2xx within 10 s; no retry then
  });
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const clientSecret = process.env.CLIENT_SECRET;
  if (!clientSecret) throw new Error('set CLIENT_SECRET (the app\'s client secret)');
  const server = createApp({ clientSecret });
  server.listen(Number(process.env.PORT ?? 8787), process.env.HOST ?? '127.0.0.1', () => {
    const address = server.address() as import('node:net').AddressInfo;
    console.log(`listening on http://${address.address}:${address.port}`);
  });
}
