// Storefront routes (no credential): C7.4 events that feed the analytics of C6.8, and the
// customer-facing order status of an order's `order_status_url`. Envelopes throughout.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { notFound } from '../http/errors.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf, nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { FINANCIAL_STATUSES, FULFILLMENT_STATUSES } from '../orders/order-view.js';
import { isUuid, uuidv7 } from '../ids.js';
import { bodyObject, fieldError, optionalText, parseInstant, requiredText } from '../content/fields.js';
import { findOrder } from '../orders/orders.repo.js';
import { insertStorefrontEvent, storeIdBySlug } from './storefront.repo.js';
import { safeEqual } from '../crypto.js';
import { noStore } from '../surfaces/no-store.js';

export const EVENT_TYPES = ['session', 'page_view'] as const;

export interface StorefrontEventInput {
  type: (typeof EVENT_TYPES)[number];
  sessionId: string;
  source: string | null;
  path: string | null;
  occurredAt: Date | null;
}

/** `{ type, sessionId, source?, path?, occurredAt? }`; `occurredAt` ISO 8601, default now (C14.14). */
export function readStorefrontEvent(raw: unknown): StorefrontEventInput {
  const body = bodyObject(raw);
  if (!(EVENT_TYPES as readonly unknown[]).includes(body.type)) throw fieldError('type', `must be one of ${EVENT_TYPES.join(', ')}`);
  let occurredAt: Date | null = null;
  if (body.occurredAt !== undefined && body.occurredAt !== null) {
    occurredAt = parseInstant(body.occurredAt);
    if (!occurredAt) throw fieldError('occurredAt', 'must be an ISO 8601 date-time');
  }
  return {
    type: body.type as StorefrontEventInput['type'],
    sessionId: requiredText(body, 'sessionId', 200),
    source: optionalText(body, 'source', { max: 200 }) || null,
    path: optionalText(body, 'path', { max: 2048 }) || null,
    occurredAt,
  };
}

const typeWords = `must be one of ${EVENT_TYPES.join(', ')}`;

/** What `readStorefrontEvent` reads; it keeps the trimming and the date parsing. */
const eventType = StringEnum(EVENT_TYPES, { description: 'required', 'x-error': typeWords });
const EventBody = Type.Object({
  type: Type.Optional(eventType),
  sessionId: nullable(Type.String({ description: 'required, not blank; at most 200 characters once trimmed' })),
  source: Type.Optional(nullable(Type.String({ description: 'traffic source, e.g. google; none = direct; at most 200 characters once trimmed' }))),
  path: Type.Optional(nullable(Type.String({ description: 'page path; at most 2048 characters once trimmed' }))),
  occurredAt: Type.Optional(nullable(Type.String({ description: 'ISO 8601 date or date-time (UTC without an offset); default now', 'x-error': 'must be an ISO 8601 date-time' }))),
}, {
  // `type` first, present and valid, as the reader checks it before `sessionId` (Ajv checks `allOf`
  // before the body's own `required` and properties).
  allOf: [Type.Unsafe({ required: ['type'], properties: { type: eventType }, 'x-error': { required: typeWords } })],
});

/** The customer-facing order status (behind `order_status_url`). */
const OrderStatusSchema = Type.Object({
  order: Type.Object({
    name: Type.String(),
    financial_status: StringEnum(FINANCIAL_STATUSES),
    fulfillment_status: StringEnum(FULFILLMENT_STATUSES),
    cancelled: Type.Boolean(),
    tracking_number: nullable(Type.String()),
    tracking_url: nullable(Type.String()),
    created_at: Timestamp(),
  }),
});

async function storeIdOf(deps: Deps, slug: string): Promise<string> {
  const id = await storeIdBySlug(deps.db, slug);
  if (!id) throw notFound('Store not found');
  return id;
}

export async function storefrontRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);
  const tags = ['storefront'];

  app.post('/storefront/:storeURL/events', {
    schema: {
      tags,
      summary: 'Record a storefront session or page view (C7.4): 202',
      params: Type.Object({ storeURL: Type.String({ description: 'the store slug' }) }),
      body: EventBody,
      response: { 202: envelopeOf(Type.Object({ eventId: Type.String({ description: 'the event UUID' }) })) },
    },
  }, async (request, reply) => {
    const input = readStorefrontEvent(request.body);
    const storeId = await storeIdOf(deps, request.params.storeURL);
    const now = deps.clock.now();
    const id = uuidv7(now.getTime());
    await insertStorefrontEvent(deps.db, {
      id, store_id: storeId, type: input.type, session_id: input.sessionId, source: input.source, path: input.path, occurred_at: input.occurredAt ?? now, created_at: now,
    });
    return reply.code(202).send(envelope({ eventId: id }, 202));
  });

  // The customer-facing status behind `order_status_url`: the order's key is its confirmation number.
  await instance.register(orderStatusRoute, { deps });
}

/**
 * The order status page in a plugin of its own, marked not to be stored (`noStore`): its key, a
 * bearer secret, is in the URL, which a shared cache would keep with the answer (the checkout
 * routes, whose token is in the path, do the same). The events route keeps ordinary headers.
 */
async function orderStatusRoute(instance: FastifyInstance, { deps }: { deps: Deps }) {
  noStore(instance);
  const app = typed(instance);
  const tags = ['storefront'];
  app.get('/storefront/:storeURL/orders/:orderId', {
    schema: {
      tags,
      summary: "An order's status for its customer (the order's order_status_url)",
      params: Type.Object({ storeURL: Type.String({ description: 'the store slug' }), orderId: Type.String({ description: 'order id (UUID)' }) }),
      querystring: Type.Object({ key: Type.Optional(Type.String({ description: 'the confirmation number' })) }),
      response: { 200: envelopeOf(OrderStatusSchema) },
    },
  }, async (request) => {
    const { storeURL, orderId } = request.params;
    const { key } = request.query;
    const storeId = await storeIdOf(deps, storeURL);
    const order = isUuid(orderId) ? await findOrder(deps.db, storeId, orderId) : null;
    // The key is a bearer secret: compared in constant time, and a wrong key looks like no order.
    if (!order || !key || !safeEqual(key, order.confirmation_number)) throw notFound('Order not found');
    return envelope({
      order: {
        name: `#${order.order_number}`,
        financial_status: order.financial_status,
        fulfillment_status: order.fulfillment_status,
        cancelled: order.cancelled_at !== null,
        tracking_number: order.tracking_number,
        tracking_url: order.tracking_url,
        created_at: order.created_at,
      },
    });
  });
}
