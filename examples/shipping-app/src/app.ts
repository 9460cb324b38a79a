// The shipping app's HTTP side, on plain node:http, built only on @svc/app-sdk:
//   GET  /auth       the install handoff (C4.2): checked, its code exchanged (C4.4), tokens kept
//   POST /rates      live rate requests (C15.3): verified, answered with this app's two services
//   POST /webhooks   orders/create (C8): an order shipped with this app's rate is fulfilled with tracking
//   POST /gdpr       the three GDPR topics (C9): done, acknowledged, completed
//   GET  /exports/:id  a customer's data export, the link a data request is completed with
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import {
  acknowledgeGdprRequest, CodeAlreadyExchangedError, completeGdprRequest, createAppClient, GDPR_TOPICS, receiveNodeRequest, sendRates, sendRefusal, verifyHandoff,
  type AppClient, type AppCredentials, type GdprTopic, type OrderCreatePayload, type TokenKeeper, type WebhookMessage,
} from '@svc/app-sdk';
import { quote } from './rates.js';
import { SeenWebhooks } from './seen-webhooks.js';
import { Shipments } from './shipments.js';

type GdprMessage = Extract<WebhookMessage, { topic: GdprTopic }>;

const isGdprMessage = (message: WebhookMessage): message is GdprMessage => (GDPR_TOPICS as readonly string[]).includes(message.topic);

export interface ShippingAppOptions {
  app: AppCredentials;
  /** This app's handle on the platform: `shipping_lines[0].source` of the orders it ships. */
  handle: string;
  /** Where this app is reached (for the export links it hands out). */
  publicUrl: string;
  keeper: TokenKeeper;
  log?: (line: string) => void;
}

export function createShippingApp(options: ShippingAppOptions): Server {
  const { app, handle, keeper } = options;
  const log = options.log ?? ((line: string) => console.log(line));
  const shipments = new Shipments();
  // Two guards against shipping an order twice, each for its own case:
  // - `handled`, the webhook ids (C8.2: the same id on every attempt of a delivery): a redelivery of
  //   a delivery already handled (our answer was lost or came after the platform's 10 s) is
  //   recognised before any work. Remembered only as long as the platform retries on its own, and at
  //   most MAX_SEEN_WEBHOOKS of them (src/seen-webhooks.ts), so a long-running app does not grow.
  // - `shipments.hasOrder`, the business rule: one shipment per order, whatever delivery brought it:
  //   a developer's manual redeliver after the window, the same order sent by two subscriptions
  //   (two webhook ids), or a redelivery the capped memory already forgot.
  // Neither guard sees a delivery still being handled, and two can arrive at once: the platform
  // sends an attempt again when ours took over its 10 s, and two subscriptions deliver together. So
  // an order being shipped is `shipping`: a second delivery of it waits for that outcome and shares
  // it (both answer 200, or both 500 and are retried), rather than ship the order again.
  const handled = new SeenWebhooks();
  const shipping = new Map<string, Promise<void>>();
  // The App API with the store's current token (refreshed by the keeper), inside its rate limit: one
  // client per store, as the SDK asks, since a client's budget is the platform's per (app, store)
  // pair. A client per call knew nothing of the others': a burst of deliveries for one store (the
  // platform sends up to 32 at once) went out together and met 429s, each then waiting a second.
  const clients = new Map<string, AppClient>();
  const clientFor = (shop: string) => {
    let client = clients.get(shop);
    if (!client) clients.set(shop, (client = createAppClient({ baseUrl: app.baseUrl, tokenProvider: () => keeper.accessToken(shop) })));
    return client;
  };
  const receive = (req: IncomingMessage) => receiveNodeRequest(req, { secret: app.clientSecret });
  // Whether the app can act for the store: it holds its tokens. After `shop/redact` it forgets them
  // while the installation stays active (C9.1), so the platform still asks it for rates and sends it
  // orders: a rate quoted then is one the buyer pays for and the app can never ship.
  const canServe = (shop: string) => keeper.installed(shop);

  const send = (res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8') => {
    res.writeHead(status, { 'content-type': type }).end(body);
  };

  async function install(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const handoff = verifyHandoff(new URL(req.url!, 'http://app').searchParams, app.clientSecret);
    if (!handoff.ok) return send(res, 401, `Refused: ${handoff.reason}\n`);
    try {
      await keeper.installFromHandoff(handoff);
      log(`installed on ${handoff.shop}`);
    } catch (err) {
      // The merchant reloaded the page (before or after a restart of the app: the token file knows
      // the code): it was exchanged already, and presenting it again would have the platform
      // revoke the tokens it gave (C4.4). The installation stands.
      if (!(err instanceof CodeAlreadyExchangedError)) throw err;
    }
    send(res, 200, `Example Shipping is installed on ${handoff.shop}.\n`);
  }

  async function rates(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const message = await receive(req);
    if (!message.ok) return sendRefusal(res, message);
    if (message.topic !== 'shipping/rates') return send(res, 400, `not a rate request: ${message.topic}\n`);
    // No rates is the answer that offers nothing (C15.3): the checkout goes on with other carriers.
    sendRates(res, (await canServe(message.shop)) ? quote(message.payload) : []);
  }

  /** orders/create: ship the order when the buyer chose one of this app's rates, once however often it is delivered. */
  function fulfill(shop: string, order: OrderCreatePayload): Promise<void> {
    const key = `${shop}\n${order.id}`;
    const inProgress = shipping.get(key);
    if (inProgress) return inProgress;
    const done = ship(shop, order).finally(() => shipping.delete(key));
    shipping.set(key, done);
    return done;
  }

  async function ship(shop: string, order: OrderCreatePayload): Promise<void> {
    if (order.shipping_lines[0]?.source !== handle || shipments.hasOrder(shop, String(order.id))) return;
    // Answered 200 and logged: a 500 would have the platform send it again for hours (C8), and no
    // retry brings the tokens back. The merchant ships it some other way.
    if (!(await canServe(shop))) return log(`cannot ship ${order.name} on ${shop}: the app holds no tokens for the store (not installed, or erased)`);
    const trackingNumber = `EXS${randomBytes(6).toString('hex').toUpperCase()}`;
    const trackingUrl = `https://track.example.com/${trackingNumber}`;
    const { error } = await clientFor(shop).POST('/api/v1/orders/{orderId}/fulfillments.json', {
      params: { path: { orderId: String(order.id) } },
      body: { tracking_number: trackingNumber, tracking_company: 'Example Shipping', tracking_url: trackingUrl, status: 'success' },
    });
    if (error) throw new Error(`fulfillment of ${order.name} failed: ${JSON.stringify(error)}`);
    shipments.add({
      shop, orderId: String(order.id), orderName: order.name, email: order.email ?? order.customer?.email ?? null,
      customerId: order.customer?.id ?? null, trackingNumber, trackingUrl, createdAt: new Date().toISOString(),
    });
    log(`fulfilled ${order.name} on ${shop}: ${trackingNumber}`);
  }

  async function webhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const message = await receive(req);
    if (!message.ok) return sendRefusal(res, message);
    if (message.topic === 'orders/create' && !(message.webhookId && handled.has(message.webhookId))) {
      // Done before answering: a failure answers 500, and the platform delivers it again later.
      await fulfill(message.shop, message.payload);
      if (message.webhookId) handled.add(message.webhookId);
    }
    send(res, 200, 'ok');
  }

  /** A GDPR request: answered at once (the answer acknowledges nothing, C9), then done, acknowledged and completed. */
  async function gdpr(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const message = await receive(req);
    if (!message.ok) return sendRefusal(res, message);
    // Only a GDPR topic: the request id alone does not make a GDPR request (the topic header is not
    // signed, and an orders/create sent here with a request id had that request completed undone).
    if (!isGdprMessage(message)) return send(res, 400, `not a GDPR request: ${message.topic}\n`);
    if (!message.gdprRequestId) return send(res, 400, `no GDPR request id: ${message.topic}\n`);
    send(res, 200, 'ok');
    void honour(message).catch((err) => log(`GDPR request ${message.gdprRequestId} on ${message.shop}: ${err}`));
  }

  async function honour(message: GdprMessage): Promise<void> {
    const { shop, gdprRequestId: requestId } = message;
    const client = clientFor(shop);
    // The work first, whatever the platform answers after: the erasure is owed to the customer, not
    // to the platform's bookkeeping. A final notice (C9.3: the webhook again, once the app missed
    // the deadline) meets a 409 on acknowledge, and a store whose grant ended a 401; acknowledging
    // first left the customer's data held in both cases.
    let dataExportUrl: string | undefined;
    if (message.topic === 'customers/data_request') {
      dataExportUrl = `${options.publicUrl}/exports/${shipments.prepareExport(shop, message.payload.customer)}`;
    } else if (message.topic === 'customers/redact') {
      shipments.eraseCustomer(shop, message.payload.customer, message.payload.orders_to_redact.map(String));
    } else if (message.topic === 'shop/redact') {
      shipments.eraseShop(shop);
    }
    await acknowledgeGdprRequest(client, requestId!);
    await completeGdprRequest(client, requestId!, dataExportUrl ? { dataExportUrl } : {});
    // The store is gone: its tokens (and its client) go last, once they are no longer needed to complete.
    if (message.topic === 'shop/redact') {
      clients.delete(shop);
      await keeper.forget(shop);
    }
    log(`GDPR ${message.topic} ${requestId} on ${shop}: completed`);
  }

  function exportOf(id: string, res: ServerResponse): void {
    const content = shipments.readExport(id);
    if (!content) return send(res, 404, 'No such export\n');
    send(res, 200, JSON.stringify(content), 'application/json');
  }

  return createServer((req, res) => {
    const path = new URL(req.url!, 'http://app').pathname;
    const route = async () => {
      if (req.method === 'GET' && path === '/auth') return install(req, res);
      if (req.method === 'POST' && path === '/rates') return rates(req, res);
      if (req.method === 'POST' && path === '/webhooks') return webhook(req, res);
      if (req.method === 'POST' && path === '/gdpr') return gdpr(req, res);
      if (req.method === 'GET' && path.startsWith('/exports/')) return exportOf(path.slice('/exports/'.length), res);
      if (req.method === 'GET' && path === '/') return send(res, 200, 'Example Shipping: a shipping app for the store platform.\n');
      send(res, 404, 'Not found\n');
    };
    route().catch((err: unknown) => {
      log(`${req.method} ${path}: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) send(res, 500, 'Something went wrong\n');
    });
  });
}
