// Developer pages for earnings and payouts (C10.4, C14.12): balance, in flight, the next payout
// date, the payouts (filtered by status, paged) and one payout with its transactions, and the
// payout method form. Each calls the service the developer API's route calls, for the signed-in
// developer only (another developer's payout is not found, as in the API).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { earnings, listPayouts, payoutDetail } from '../payouts/payouts.views.js';
import { PAYOUT_STATUSES } from '../payouts/payouts.js';
import { getPayoutMethod, putPayoutMethod } from '../billing/developer-accounts.js';
import { parsePage } from '../http/paging.js';
import { pagedQuery } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { DEVELOPER_ROLES } from '../http/user-auth.js';
import { formRefusal } from './refusals.js';
import { page } from './render.js';

const developer = { roles: DEVELOPER_ROLES };
const text = Type.Optional(Type.String());
const MethodForm = Type.Object({ _csrf: text, type: text, email: text, accountHolder: text, accountNumber: text, routingNumber: text });

export async function earningsPages(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  app.get('/earnings', {
    config: developer,
    schema: { querystring: pagedQuery({ status: text, saved: text }) },
  }, async (request, reply) => {
    const id = request.dashboardUser!.id;
    const status = request.query.status || undefined;
    const paging = parsePage(request.query, { limit: 25 });
    const [figures, payouts, method] = await Promise.all([earnings(deps, id), listPayouts(deps, id, paging, status), getPayoutMethod(deps, id)]);
    return page(deps, request, reply, 'earnings', {
      title: 'Earnings and payouts', figures, payouts: payouts.items, method: method.payoutMethod,
      filters: { status: status ?? '' }, statuses: PAYOUT_STATUSES,
      paged: { page: paging.page, limit: paging.limit, total: payouts.pagination.total },
      notice: request.query.saved ? 'Payout method saved.' : null,
    });
  });

  app.get('/earnings/payouts/:payoutId', { config: developer, schema: { params: Type.Object({ payoutId: Type.String() }) } }, async (request, reply) => {
    const { payout, transactions } = await payoutDetail(deps, request.dashboardUser!.id, request.params.payoutId);
    return page(deps, request, reply, 'payout', { title: 'Payout', payout, transactions });
  });

  const methodPage = (request: FastifyRequest, reply: FastifyReply, values: Record<string, string | undefined>, errors: Record<string, string>, current: unknown, status = 200) =>
    page(deps, request, reply, 'payout-method', { title: 'Payout method', values, errors, current }, status);

  app.get('/earnings/payout-method', { config: developer }, async (request, reply) => {
    const { payoutMethod } = await getPayoutMethod(deps, request.dashboardUser!.id);
    const values = payoutMethod?.type === 'paypal'
      ? { type: 'paypal', email: payoutMethod.email }
      : { type: 'bank', accountHolder: payoutMethod?.accountHolder ?? '', routingNumber: payoutMethod?.routingNumber ?? '' };
    return methodPage(request, reply, values, {}, payoutMethod);
  });

  app.post('/earnings/payout-method', { config: developer, schema: { body: MethodForm } }, async (request, reply) => {
    const { _csrf, ...values } = request.body;
    // Only the chosen kind's fields, as a client of the API would send them.
    const body = values.type === 'paypal' ? { type: 'paypal', email: values.email } : { type: values.type, accountHolder: values.accountHolder, accountNumber: values.accountNumber, routingNumber: values.routingNumber };
    try {
      await putPayoutMethod(deps, request.dashboardUser!.id, body);
      return reply.redirect('/dashboard/earnings?saved=1', 303);
    } catch (err) {
      const refusal = formRefusal(err, reply, ['bad_request']);
      const field = refusal.message.split(' ')[0];
      const { payoutMethod } = await getPayoutMethod(deps, request.dashboardUser!.id);
      // A typed account number is not shown again (it is a secret); the rest is kept.
      return methodPage(request, reply, { ...values, accountNumber: '' }, { [['email', 'accountHolder', 'accountNumber', 'routingNumber', 'type'].includes(field) ? field : 'type']: refusal.message }, payoutMethod, 400);
    }
  });
}
