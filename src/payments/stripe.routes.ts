// POST /payments/stripe/webhook (C13.1). The signature covers the exact bytes Stripe sent, so this
// route alone parses its body as a raw buffer (an encapsulated plugin keeps the parser local).
import type { FastifyInstance } from 'fastify';
import Stripe from 'stripe';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { badRequest } from '../http/errors.js';
import { assertCleanPart } from '../http/input-guard.js';
import { envelopeOf, nullable, StringEnum } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { envelope } from '../http/shapes.js';
import { handleStripeEvent } from './stripe.service.js';

// Only the verifier is used: it needs no API key and makes no network call.
const stripe = new Stripe('sk_test_unused');

/**
 * What Stripe sends: an event as JSON. The route reads it as the raw bytes (a Buffer, or nothing
 * for an empty request) and Stripe's verifier parses it after checking the signature, so the schema
 * documents the event without constraining it: a Buffer passes `type: 'object'` and has none of
 * these properties, and a missing body is null. Any other failure is the handler's 400.
 */
const StripeEventBody = Type.Unsafe<Buffer | null>({
  type: ['object', 'null'],
  description: 'A Stripe event (https://docs.stripe.com/api/events/object), verified against `Stripe-Signature` over its exact bytes; '
    + 'the subscription and invoice events of C13.2 are mapped, others acknowledged and ignored',
  properties: {
    id: { type: 'string', description: 'the event id (`evt_...`); a repeated id is acknowledged and ignored (C13.3)' },
    type: { type: 'string', description: 'e.g. `customer.subscription.updated`, `invoice.paid`' },
    data: { type: 'object', properties: { object: { type: 'object', description: 'the subscription or invoice' } } },
  },
});

const OutcomeSchema = Type.Object({
  received: Type.Boolean({ description: 'always true' }),
  duplicate: Type.Boolean({ description: 'the event id was seen before: nothing emitted again (C13.3)' }),
  topic: nullable(Type.String({ description: 'the subscription topic emitted, if any' })),
  ignored: Type.Optional(StringEnum(['unmapped', 'no_store', 'subscription_cancelled', 'awaiting_create', 'stale'] as const, {
    description: 'why a new event emitted nothing: `awaiting_create` is held and emitted right after the subscription\'s first invoice.paid '
      + '(subscriptions/create); `stale` is an update or failed charge older (Stripe\'s `created`) than an event already applied',
  })),
});

export async function stripeWebhookRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  const app = typed(instance);

  app.post('/payments/stripe/webhook', {
    schema: {
      tags: ['payments'], summary: 'Stripe events for the subscription topics (C13)',
      headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String({ description: "Stripe's signature of the body (400 without it, or when it does not verify)" })) }),
      body: StripeEventBody,
      response: { 200: envelopeOf(OutcomeSchema) },
    },
  }, async (request) => {
    const secret = deps.config.stripeWebhookSecret;
    if (!secret) throw badRequest('Stripe events are not accepted: SVC_STRIPE_WEBHOOK_SECRET is not set');
    const header = request.headers['stripe-signature'];
    const raw = request.body;
    if (typeof header !== 'string' || !header || !Buffer.isBuffer(raw)) throw badRequest('Missing Stripe-Signature header or body');
    let event: Stripe.Event;
    try {
      // The tolerance is Stripe's replay window against real time: Stripe signs with its own clock.
      event = stripe.webhooks.constructEvent(raw, header, secret);
    } catch {
      throw badRequest('Invalid Stripe signature');
    }
    // Decoded here rather than by the app's JSON parser: held to the same input guard (a NUL in a
    // field the handler stores failed its transaction, a 500 the processor retried for days).
    assertCleanPart(event, 'body');
    // The event id is the idempotency key (C13.3) and the type picks the topic: an event without
    // them (signed, but not an event object) was stored as a null key, a 500 Stripe retried for days.
    const { id, type } = event as { id?: unknown; type?: unknown };
    if (typeof id !== 'string' || !id || typeof type !== 'string' || !type) throw badRequest('Not a Stripe event: id and type must be non-empty strings');
    return envelope({ received: true, ...(await handleStripeEvent(deps, event as any)) });
  });
}
