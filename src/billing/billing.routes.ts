// The routes of billing and payouts, in two surfaces (src/app.ts registers each in its own): the
// developer's earnings, payouts and payout method, and analytics over their apps (developer
// surface), and the platform operator's payout routes (operator surface, C10.7).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { badRequest } from '../http/errors.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { envelopeListOf, envelopeOf, Id, nullable, PagingQuery, pagedQuery, StringEnum } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { longerThan } from '../text.js';
import { appInstallations, developerAnalytics } from './developer-analytics.js';
import { getDeveloper, getPayoutMethod, patchDeveloper, putPayoutMethod } from './developer-accounts.js';
import { earnings, listPayouts, payoutDetail, payoutView, payoutWithIds } from '../payouts/payouts.views.js';
import { dispatchPayouts, FAILABLE_STATUSES, failPayout, markPayoutPaid, PAYOUT_STATUSES, runPayoutSweep } from '../payouts/payouts.js';
import {
  DeveloperAnalyticsSchema, DeveloperInstallationSchema, DeveloperSettingsBody, DeveloperSettingsSchema, EarningsSchema,
  PayoutMethodBody, PayoutMethodSchema, PayoutSchema, PayoutTransactionSchema,
} from './billing-schemas.js';

/** Longest operator failure reason kept (`failureReason`). */
export const MAX_FAILURE_REASON = 1000;

const payoutEnvelope = envelopeOf(Type.Object({ payout: PayoutSchema }));
const developerEnvelope = envelopeOf(Type.Object({ developer: DeveloperSettingsSchema }));
const payoutMethodEnvelope = envelopeOf(Type.Object({ payoutMethod: PayoutMethodSchema }));

export async function developerBillingRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);
  const tags = ['developer'];

  app.get('/apps/developer/analytics', {
    schema: { tags, summary: 'Aggregate analytics over the caller’s apps', response: { 200: envelopeOf(DeveloperAnalyticsSchema) } },
  }, async (request) => envelope(await developerAnalytics(deps, request.user!.id)));

  app.get('/apps/developer/:appId/installations', {
    schema: {
      tags, summary: 'Installations of an app the caller owns, newest first',
      params: Type.Object({ appId: Id('appId (UUID); another value is not found') }),
      querystring: PagingQuery,
      response: {
        200: envelopeListOf(Type.Object({
          installations: Type.Array(DeveloperInstallationSchema),
          activeSubscribers: Type.Integer({ description: 'active installations with an active or trialing subscription' }),
          totalInstalls: Type.Integer({ description: 'active installations (C14.12)' }),
        })),
      },
    },
  }, async (request) => {
    const page = parsePage(request.query);
    const { data, listed } = await appInstallations(deps, request.user!, request.params.appId, page);
    return envelopeList(data, page, data.installations.length, listed);
  });

  app.get('/apps/developer/earnings', {
    schema: { tags, summary: 'Earnings, balance and next payout (USD)', response: { 200: envelopeOf(EarningsSchema) } },
  }, async (request) => envelope(await earnings(deps, request.user!.id)));

  app.get('/apps/developer/payouts', {
    schema: {
      tags, summary: 'Payouts, newest first',
      querystring: pagedQuery({ status: Type.Optional(Type.String({ description: `one of ${PAYOUT_STATUSES.join(', ')}; another value is 400` })) }),
      response: {
        200: envelopeListOf(Type.Object({
          items: Type.Array(PayoutSchema),
          pagination: Type.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer(), hasMore: Type.Boolean() }),
        })),
      },
    },
  }, async (request) => {
    const page = parsePage(request.query, { limit: 50, max: 250 });
    const data = await listPayouts(deps, request.user!.id, page, request.query.status);
    return envelopeList(data, page, data.items.length, data.pagination.total);
  });

  app.get('/apps/developer/payouts/:payoutId', {
    schema: {
      tags, summary: 'One payout with its transactions',
      params: Type.Object({ payoutId: Id('payoutId (UUID); another developer’s is not found') }),
      response: { 200: envelopeOf(Type.Object({ payout: PayoutSchema, transactions: Type.Array(PayoutTransactionSchema) })) },
    },
  }, async (request) => envelope(await payoutDetail(deps, request.user!.id, request.params.payoutId)));

  app.get('/apps/developer/payout-method', {
    schema: { tags, summary: 'The payout method, account number masked (C10.4)', response: { 200: payoutMethodEnvelope } },
  }, async (request) => envelope(await getPayoutMethod(deps, request.user!.id)));

  app.put('/apps/developer/payout-method', {
    schema: { tags, summary: 'Set the payout method: bank or PayPal (C10.4)', body: PayoutMethodBody, response: { 200: payoutMethodEnvelope } },
  }, async (request) => envelope(await putPayoutMethod(deps, request.user!.id, request.body)));
}

export async function operatorPayoutRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);
  const tags = ['operator'];
  const params = Type.Object({ payoutId: Id('payoutId (UUID); another value is not found') });
  const notNow = { errors: { 409: 'The payout is not in a status this step applies to' } };

  app.post('/apps/admin/payouts/process-scheduled', {
    schema: {
      tags, summary: 'Sweep due developers (all with force) and dispatch pending payouts (C10.7)',
      body: nullable(Type.Object({ force: Type.Optional(Type.Boolean({ description: 'sweep every developer with a balance, due or not' })) })),
      response: {
        200: envelopeOf(Type.Object({
          created: Type.Integer({ description: 'payouts created by the sweep' }),
          dispatched: Type.Integer({ description: 'payouts sent to the provider' }),
          failed: Type.Integer({ description: 'payouts the provider refused' }),
        })),
      },
    },
  }, async (request) => {
    const { created } = await runPayoutSweep(deps, { force: request.body?.force === true });
    const { dispatched, failed } = await dispatchPayouts(deps);
    return envelope({ created, dispatched, failed });
  });

  app.post('/apps/admin/payouts/:payoutId/mark-paid', {
    config: notNow,
    schema: { tags, summary: 'in_transit -> paid (C10.7)', params, response: { 200: payoutEnvelope } },
  }, async (request) => {
    const paid = await markPayoutPaid(deps, request.params.payoutId);
    return envelope({ payout: payoutView((await payoutWithIds(deps, paid.id))!) });
  });

  app.post('/apps/admin/payouts/:payoutId/fail', {
    config: { errors: { ...notNow.errors, 503: 'The payout provider could not be reached to settle whether a processing payout was sent; nothing changed' } },
    schema: {
      tags, summary: 'Fail a payout; its amount returns to the balance (C10.7)', params,
      body: Type.Object({
        reason: Type.String({ description: 'why the payout failed (not blank)' }),
        expectedStatus: Type.Optional(StringEnum(FAILABLE_STATUSES, {
          description: 'the status the operator saw; when the payout has moved on since (a pending payout sent meanwhile is in_transit, with money on its way), 409 and nothing changes',
        })),
      }),
      response: { 200: payoutEnvelope },
    },
  }, async (request) => {
    const reason = request.body.reason.trim();
    if (!reason) throw badRequest('reason is required');
    // Kept as the payout's failureReason and shown to the developer: bounded like other texts.
    if (longerThan(reason, MAX_FAILURE_REASON)) throw badRequest(`reason is at most ${MAX_FAILURE_REASON} characters`);
    const failed = await failPayout(deps, request.params.payoutId, reason, request.body.expectedStatus);
    return envelope({ payout: payoutView((await payoutWithIds(deps, failed.id))!) });
  });

  const developerParams = Type.Object({ developerId: Id('a developer (MERCHANT or PARTNER account); another value is not found') });
  app.get('/apps/admin/developers/:developerId', {
    schema: { tags, summary: 'A developer’s payout settings', params: developerParams, response: { 200: developerEnvelope } },
  }, async (request) => envelope(await getDeveloper(deps, request.params.developerId)));

  app.patch('/apps/admin/developers/:developerId', {
    schema: {
      tags, summary: 'Set payoutSchedule, minimumPayoutAmount, commissionRate (C10.4)', params: developerParams,
      body: nullable(DeveloperSettingsBody), response: { 200: developerEnvelope },
    },
  }, async (request) => envelope(await patchDeveloper(deps, request.params.developerId, request.body ?? {})));
}
