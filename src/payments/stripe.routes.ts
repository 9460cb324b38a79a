// POST /payments/stripe/webhook (C13.1). The signature covers the exact bytes Stripe sent, so this
// route alone parses its body as a raw buffer (an encapsulated plugin keeps the parser local).
import type { FastifyInstance } from 'fastify';
import Stripe from 'stripe';
import type { Deps } from '../deps.js';
import { badRequest } from '../http/errors.js';
import { envelope } from '../http/shapes.js';
import { handleStripeEvent } from './stripe.service.js';

// Only the verifier is used: it needs no API key and makes no network call.
const stripe = new Stripe('sk_test_unused');

export async function stripeWebhookRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post('/payments/stripe/webhook', {
    schema: { tags: ['payments'], summary: 'Stripe events for the subscription topics (C13)' },
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
    return envelope({ received: true, ...(await handleStripeEvent(deps, event as any)) });
  });
}
