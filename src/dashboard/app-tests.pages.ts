// Developer test tools of an app (issue 14) as a page: send a test webhook (a topic's sample payload
// to an address, as `POST /apps/developer/{appId}/webhooks/test`) and test shipping rates (a sample
// rate request to the ratesUrl or an address, as `POST /apps/developer/{appId}/shipping-rates/test`).
// Each form calls the service the API's route calls and answers on the same page with the outcome,
// as Replay does: nothing to redirect to (a test webhook is in the delivery log, linked; a rate test
// is recorded nowhere). Everything shown of the app's reply is the app's text: escaped by the view.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import { ownedApp } from '../apps/apps.service.js';
import type { AppRow } from '../apps/apps.repo.js';
import { testShippingRates, type RateTestResultSchema } from '../checkout/rate-test.js';
import { typed } from '../http/typed.js';
import { DEVELOPER_ROLES } from '../http/user-auth.js';
import { sendTestDelivery, type TestDeliveryResultSchema } from '../webhooks/test-delivery.js';
import { TOPICS } from '../webhooks/topics.js';
import { errorsByField, formRefusal } from './refusals.js';
import { page } from './render.js';

const developer = { roles: DEVELOPER_ROLES };
const text = Type.Optional(Type.String());
const AppParams = Type.Object({ appId: Type.String() });
const WebhookForm = Type.Object({ _csrf: text, topic: text, address: text });
const RatesForm = Type.Object({ _csrf: text, address: text, currency: text });

type FormValues = Record<string, string | undefined>;
/** One form's state: what was typed, the refusal by field (`_form`: not about one field), its outcome. */
interface FormState<T> {
  values: FormValues;
  errors: Record<string, string>;
  result: T | null;
}

/**
 * The refusals the forms show (422: a field's value; 429 and 503: try again later); anything else
 * (another developer's app: 404) goes to the dashboard's error handler.
 */
const FORM_REFUSALS = ['unprocessable', 'bad_request', 'throttled', 'unavailable'] as const;

/** A blank field is not given: the service's default applies (the ratesUrl, USD). */
const given = (value: string | undefined) => (value && value.trim() ? value.trim() : undefined);

export async function appTestPages(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);

  const testPage = (request: FastifyRequest, reply: FastifyReply, row: AppRow, forms: {
    webhook?: FormState<Static<typeof TestDeliveryResultSchema>>;
    rates?: FormState<Static<typeof RateTestResultSchema>>;
  }, status = 200) =>
    page(deps, request, reply, 'app-test', {
      title: `Test · ${row.name}`,
      app: { appId: row.id, name: row.name, ratesUrl: row.extensions.shipping?.ratesUrl ?? null },
      topics: TOPICS,
      webhook: forms.webhook ?? { values: { topic: TOPICS[0], address: '' }, errors: {}, result: null },
      rates: forms.rates ?? { values: { address: '', currency: '' }, errors: {}, result: null },
    }, status);

  app.get('/apps/:appId/test', { config: developer, schema: { params: AppParams } }, async (request, reply) =>
    testPage(request, reply, await ownedApp(deps, request.dashboardUser!, request.params.appId), {}));

  app.post('/apps/:appId/test/webhook', { config: developer, schema: { params: AppParams, body: WebhookForm } }, async (request, reply) => {
    // Ownership first, as the API's route: another developer's app is never tested against (404).
    const row = await ownedApp(deps, request.dashboardUser!, request.params.appId);
    const values = { topic: request.body.topic ?? '', address: request.body.address ?? '' };
    try {
      const result = await sendTestDelivery(deps, request.dashboardUser!, row.id, { topic: values.topic, address: values.address.trim() });
      return testPage(request, reply, row, { webhook: { values, errors: {}, result } });
    } catch (err) {
      const refusal = formRefusal(err, reply, FORM_REFUSALS);
      return testPage(request, reply, row, { webhook: { values, errors: errorsByField(refusal, { named: true }), result: null } }, refusal.status);
    }
  });

  app.post('/apps/:appId/test/shipping-rates', { config: developer, schema: { params: AppParams, body: RatesForm } }, async (request, reply) => {
    const row = await ownedApp(deps, request.dashboardUser!, request.params.appId);
    const values = { address: request.body.address ?? '', currency: request.body.currency ?? '' };
    try {
      const result = await testShippingRates(deps, request.dashboardUser!, row.id, { address: given(values.address), currency: given(values.currency) });
      return testPage(request, reply, row, { rates: { values, errors: {}, result } });
    } catch (err) {
      const refusal = formRefusal(err, reply, FORM_REFUSALS);
      return testPage(request, reply, row, { rates: { values, errors: errorsByField(refusal, { named: true }), result: null } }, refusal.status);
    }
  });
}
