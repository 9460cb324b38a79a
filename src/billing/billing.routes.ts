// The routes of billing and payouts, in two surfaces (src/app.ts registers each in its own): the
// developer's earnings, payouts and payout method, and analytics over their apps (developer
// surface), and the platform operator's payout routes (operator surface, C10.7).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { badRequest } from '../http/errors.js';
import { parsePage } from '../http/paging.js';
import { envelope, envelopeList } from '../http/shapes.js';
import { appInstallations, developerAnalytics } from './developer-analytics.js';
import { getDeveloper, getPayoutMethod, patchDeveloper, putPayoutMethod } from './developer-accounts.js';
import { earnings, listPayouts, payoutDetail, payoutView, payoutWithIds } from '../payouts/payouts.views.js';
import { dispatchPayouts, failPayout, markPayoutPaid, runPayoutSweep } from '../payouts/payouts.js';

const anyBody = Type.Object({}, { additionalProperties: true });

export async function developerBillingRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  const tags = ['developer'];

  app.get('/apps/developer/analytics', { schema: { tags, summary: 'Aggregate analytics over the caller’s apps' } },
    async (request) => envelope(await developerAnalytics(deps, request.user!.id)));

  app.get('/apps/developer/:appId/installations', {
    schema: { tags, summary: 'Installations of an app the caller owns', params: Type.Object({ appId: Type.String() }) },
  }, async (request) => {
    const page = parsePage(request.query as Record<string, unknown>);
    const { data, listed } = await appInstallations(deps, request.user!, (request.params as any).appId, page);
    return envelopeList(data, page, data.installations.length, listed);
  });

  app.get('/apps/developer/earnings', { schema: { tags, summary: 'Earnings, balance and next payout (USD)' } },
    async (request) => envelope(await earnings(deps, request.user!.id)));

  app.get('/apps/developer/payouts', {
    schema: { tags, summary: 'Payouts, newest first', querystring: Type.Object({ status: Type.Optional(Type.String()) }, { additionalProperties: true }) },
  }, async (request) => {
    const query = request.query as Record<string, unknown>;
    const page = parsePage(query, { limit: 50, max: 250 });
    const data = await listPayouts(deps, request.user!.id, page, query.status);
    return envelopeList(data, page, data.items.length, data.pagination.total);
  });

  app.get('/apps/developer/payouts/:payoutId', {
    schema: { tags, summary: 'One payout with its transactions', params: Type.Object({ payoutId: Type.String() }) },
  }, async (request) => envelope(await payoutDetail(deps, request.user!.id, (request.params as any).payoutId)));

  app.get('/apps/developer/payout-method', { schema: { tags, summary: 'The payout method, account number masked (C10.4)' } },
    async (request) => envelope(await getPayoutMethod(deps, request.user!.id)));

  app.put('/apps/developer/payout-method', { schema: { tags, summary: 'Set the payout method: bank or PayPal (C10.4)', body: anyBody } },
    async (request) => envelope(await putPayoutMethod(deps, request.user!.id, (request.body ?? {}) as Record<string, unknown>)));
}

export async function operatorPayoutRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  const tags = ['operator'];
  const payoutId = Type.Object({ payoutId: Type.String() });

  app.post('/apps/admin/payouts/process-scheduled', {
    schema: { tags, summary: 'Sweep due developers (all with force) and dispatch pending payouts (C10.7); body { force? }' },
  }, async (request) => {
    const force = (request.body as any)?.force;
    if (force !== undefined && typeof force !== 'boolean') throw badRequest('force must be a boolean');
    const { created } = await runPayoutSweep(deps, { force: force === true });
    const { dispatched, failed } = await dispatchPayouts(deps);
    return envelope({ created, dispatched, failed });
  });

  app.post('/apps/admin/payouts/:payoutId/mark-paid', { schema: { tags, summary: 'in_transit -> paid (C10.7)', params: payoutId } },
    async (request) => {
      const paid = await markPayoutPaid(deps, (request.params as any).payoutId);
      return envelope({ payout: payoutView((await payoutWithIds(deps, paid.id))!) });
    });

  app.post('/apps/admin/payouts/:payoutId/fail', { schema: { tags, summary: 'Fail a payout; its amount returns to the balance (C10.7)', params: payoutId, body: anyBody } },
    async (request) => {
      const reason = (request.body as any)?.reason;
      if (typeof reason !== 'string' || !reason.trim()) throw badRequest('reason is required');
      const failed = await failPayout(deps, (request.params as any).payoutId, reason.trim());
      return envelope({ payout: payoutView((await payoutWithIds(deps, failed.id))!) });
    });

  const developerId = Type.Object({ developerId: Type.String() });
  app.get('/apps/admin/developers/:developerId', { schema: { tags, summary: 'A developer’s payout settings', params: developerId } },
    async (request) => envelope(await getDeveloper(deps, (request.params as any).developerId)));

  app.patch('/apps/admin/developers/:developerId', {
    schema: { tags, summary: 'Set payoutSchedule, minimumPayoutAmount, commissionRate (C10.4)', params: developerId, body: anyBody },
  }, async (request) => envelope(await patchDeveloper(deps, (request.params as any).developerId, (request.body ?? {}) as Record<string, unknown>)));
}
