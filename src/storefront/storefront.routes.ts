// Storefront routes (no credential): C7.4 events that feed the analytics of C6.8, and the
// customer-facing order status of an order's `order_status_url`. Envelopes throughout.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { notFound } from '../http/errors.js';
import { envelope } from '../http/shapes.js';
import { isUuid, uuidv7 } from '../ids.js';
import { bodyObject, fieldError, optionalText, parseInstant, requiredText } from '../content/fields.js';
import { findOrder } from '../orders/orders.repo.js';
import { insertStorefrontEvent, storeIdBySlug } from './storefront.repo.js';
import { safeEqual } from '../crypto.js';

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

async function storeIdOf(deps: Deps, slug: string): Promise<string> {
  const id = await storeIdBySlug(deps.db, slug);
  if (!id) throw notFound('Store not found');
  return id;
}

export async function storefrontRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  const tags = ['storefront'];

  app.post('/storefront/:storeURL/events', {
    schema: {
      tags,
      summary: 'Record a storefront session or page view (C7.4): 202',
      params: Type.Object({ storeURL: Type.String({ description: 'the store slug' }) }),
      body: Type.Object({
        type: Type.Optional(Type.Unknown({ description: 'session or page_view' })),
        sessionId: Type.Optional(Type.Unknown({ description: 'string, required' })),
        source: Type.Optional(Type.Unknown({ description: 'traffic source, e.g. google; none = direct' })),
        path: Type.Optional(Type.Unknown({ description: 'page path' })),
        occurredAt: Type.Optional(Type.Unknown({ description: 'ISO 8601, default now' })),
      }),
    },
  }, async (request, reply) => {
    const input = readStorefrontEvent(request.body);
    const storeId = await storeIdOf(deps, (request.params as { storeURL: string }).storeURL);
    const now = deps.clock.now();
    const id = uuidv7(now.getTime());
    await insertStorefrontEvent(deps.db, {
      id, store_id: storeId, type: input.type, session_id: input.sessionId, source: input.source, path: input.path, occurred_at: input.occurredAt ?? now, created_at: now,
    });
    return reply.code(202).send(envelope({ eventId: id }, 202));
  });

  // The customer-facing status behind `order_status_url`: the order's key is its confirmation number.
  app.get('/storefront/:storeURL/orders/:orderId', {
    schema: {
      tags,
      summary: "An order's status for its customer (the order's order_status_url)",
      params: Type.Object({ storeURL: Type.String(), orderId: Type.String() }),
      querystring: Type.Object({ key: Type.Optional(Type.String({ description: 'the confirmation number' })) }),
    },
  }, async (request) => {
    const { storeURL, orderId } = request.params as { storeURL: string; orderId: string };
    const key = (request.query as { key?: string }).key;
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
