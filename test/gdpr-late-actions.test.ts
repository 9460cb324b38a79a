// The GDPR deadlines hold at the app's own call (app-api.md GDPR webhooks: acknowledge within 30
// days, complete within 90, "otherwise the request is marked failed for the app and the merchant is
// notified"; C9.2, C9.3, C9.5), not only from the daily job's next run: an app that acknowledges or
// completes a second late, before the job ran, is refused 409 and failed as the job fails it (error
// message, final notice, the merchant's notification and email, the request's status), and the job
// then notifies nobody again. At the deadline instant exactly the app is on time, for the call and
// for the job alike. Each test leaves no app owing anything, so the next test's job runs see only
// its own requests.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { installApp, storeWithApp, type Merchant, type TestApp } from './helpers/actors.js';
import { gdprAppBody } from './helpers/gdpr.js';
import { ensureOperator } from '../src/accounts/accounts.service.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { gdprDispatcher } from '../src/gdpr/gdpr.dispatch.js';
import { flushMail } from '../src/mail/mail.js';

let h: Harness;
let rx: Receiver;
const OPERATOR = 'gdpr-late-ops@example.com';
beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver();
  await ensureOperator(h.deps, OPERATOR, 'operator-password');
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

// Platform JWTs live 12 hours and access tokens 24 (service clock): after the clock moves by days,
// the merchant and the operator log in again and the app is re-authorised, as they would be.
const issued = new Map<string, { token: string; at: number }>();
async function fresh(key: string, make: () => Promise<string>): Promise<string> {
  const hit = issued.get(key);
  if (hit && h.clock.nowMs() - hit.at < 6 * 3600_000) return hit.token;
  const token = await make();
  issued.set(key, { token, at: h.clock.nowMs() });
  return token;
}
async function login(email: string, password: string): Promise<string> {
  const res = await h.req('POST', '/auth/login', { body: { email, password } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.token;
}
const merchantToken = (m: Merchant) => fresh(m.email, () => login(m.email, 'correct-horse'));
const appToken = (m: Merchant, app: TestApp) =>
  fresh(app.appId, async () => (await installApp(h, { ...m, token: await merchantToken(m) }, app)).accessToken);
const operator = () => fresh('op', () => login(OPERATOR, 'operator-password'));
const settle = () => gdprDispatcher(h.deps).settle();
let seq = 0;

async function oneApp() {
  const tag = `late${++seq}`;
  const s = await storeWithApp(h, gdprAppBody(rx.url, tag));
  const at = h.clock.nowMs();
  issued.set(s.merchant.email, { token: s.merchant.token, at });
  issued.set(s.app.appId, { token: s.accessToken, at });
  return { merchant: s.merchant, app: s.app, path: `/${tag}/data` };
}
type Scenario = Awaited<ReturnType<typeof oneApp>>;

interface Created {
  requestId: string;
  acknowledgeDeadline: string;
  completionDeadline: string;
}
async function dataRequest(s: Scenario, email: string): Promise<Created> {
  const res = await h.req('POST', '/apps/gdpr/data-request', { token: await merchantToken(s.merchant), body: { customerEmail: email } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

/** The service clock to `at` (ms), forward only; the call that follows comes a few ms later. */
async function moveTo(at: number) {
  const by = at - h.clock.nowMs();
  expect(by).toBeGreaterThan(0);
  await h.advance(by / 1000);
}
/** Close to `at`: the clock moved, the tokens renewed there, then `at` itself (the call must be on its side of it). */
async function approach(s: Scenario, at: number) {
  await moveTo(at - 60_000);
  await appToken(s.merchant, s.app);
  await merchantToken(s.merchant);
  await operator();
  await moveTo(at);
}

const act = async (s: Scenario, action: 'acknowledge' | 'complete', id: string) =>
  h.req('POST', `/apps/gdpr/${action}/${id}`, { token: await appToken(s.merchant, s.app) });
const detail = async (s: Scenario, id: string) => (await h.req('GET', `/apps/gdpr/requests/${id}`, { token: await merchantToken(s.merchant) })).json().data;
const received = (s: Scenario, requestId: string) => rx.received.filter((r) => r.path === s.path && r.headers['x-svc-gdpr-request-id'] === requestId);

/** C12.2, as the operator runs it; answers how many requests it changed. */
async function runJob(): Promise<number> {
  const res = await h.req('POST', '/apps/admin/jobs/gdpr-deadlines/run', { token: await operator() });
  expect(res.statusCode, res.body).toBe(200);
  await settle();
  return res.json().data.processed;
}

/** C9.5: the merchant's notifications (of this store) and GDPR failure emails. */
async function notified(s: Scenario) {
  const res = await h.req('GET', '/notifications', { token: await merchantToken(s.merchant) });
  expect(res.statusCode, res.body).toBe(200);
  await flushMail();
  const mail = await h.req('GET', `/apps/admin/emails?to=${encodeURIComponent(s.merchant.email)}`, { token: await operator() });
  expect(mail.statusCode, mail.body).toBe(200);
  return {
    notifications: (res.json().data.notifications as any[]).map((n) => ({ type: n.type, ...n.data })),
    emails: (mail.json().data.emails as any[]).filter((e) => e.template === 'gdpr_app_failed').length,
  };
}

/** The 409 of a late call: the route's envelope error, as for an app the job already failed. */
function expectLate(res: { statusCode: number; json(): any }, errorMessage: string) {
  expect(res.statusCode).toBe(409);
  expect(res.json()).toMatchObject({ status: 409, state: 'error', data: null, message: `This app already failed the request: ${errorMessage}` });
}

const ackMissed = (r: Created) => `Not acknowledged by the acknowledge deadline (${r.acknowledgeDeadline})`;
const completionMissed = (r: Created) => `Not completed by the completion deadline (${r.completionDeadline})`;

describe('app-api.md GDPR webhooks, C9.3: the 30-day acknowledge deadline holds at the call', () => {
  it('1 s before: 200 acknowledged; 1 s after, the job not yet run: 409, the app and the request failed, a final notice, the merchant notified once; the job then notifies nobody', async () => {
    const s = await oneApp();
    const onTime = await dataRequest(s, 'on-time@example.com');
    const late = await dataRequest(s, 'late@example.com');
    await settle();

    await approach(s, Date.parse(onTime.acknowledgeDeadline) - 1000);
    const ok = await act(s, 'acknowledge', onTime.requestId);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data).toMatchObject({ status: 'acknowledged', appAcknowledgments: [{ appId: s.app.appId, status: 'acknowledged', errorMessage: null }] });

    await moveTo(Date.parse(late.acknowledgeDeadline) + 1000);
    expectLate(await act(s, 'acknowledge', late.requestId), ackMissed(late));
    await settle();

    // As the job fails an app: its state and message, the request failed, the webhook again as a final notice.
    const view = await detail(s, late.requestId);
    expect(view.status).toBe('failed');
    expect(view.appAcknowledgments).toEqual([expect.objectContaining({ appId: s.app.appId, status: 'failed', acknowledgedAt: null, errorMessage: ackMissed(late) })]);
    expect(received(s, late.requestId)).toHaveLength(2);
    expect(received(s, late.requestId)[1].raw.equals(received(s, late.requestId)[0].raw)).toBe(true);
    expect(received(s, onTime.requestId)).toHaveLength(1);
    expect((await detail(s, onTime.requestId)).status).toBe('acknowledged');
    const once = { notifications: [{ type: 'gdpr_app_failed', requestId: late.requestId, requestType: 'data_request', appId: s.app.appId, appName: expect.any(String), reason: 'acknowledge_deadline' }], emails: 1 };
    expect(await notified(s)).toEqual(once);

    // The job finds nothing left to do: no second notification, email or notice.
    expect(await runJob()).toBe(0);
    expect(await notified(s)).toEqual(once);
    expect(received(s, late.requestId)).toHaveLength(2);
    // The failure is final, as after the job.
    expectLate(await act(s, 'acknowledge', late.requestId), ackMissed(late));
    expect(await notified(s)).toEqual(once);

    expect((await act(s, 'complete', onTime.requestId)).statusCode).toBe(200);
  });
});

describe('app-api.md GDPR webhooks, C9.3: the 90-day completion deadline holds at the call', () => {
  it('both acknowledged; complete 1 s before: 200 completed; 1 s after, the job not yet run: 409, failed, the merchant notified once, no final notice; the job then notifies nobody', async () => {
    const s = await oneApp();
    const onTime = await dataRequest(s, 'done-on-time@example.com');
    const late = await dataRequest(s, 'done-late@example.com');
    await settle();
    expect((await act(s, 'acknowledge', onTime.requestId)).statusCode).toBe(200);
    expect((await act(s, 'acknowledge', late.requestId)).statusCode).toBe(200);

    await approach(s, Date.parse(onTime.completionDeadline) - 1000);
    const ok = await act(s, 'complete', onTime.requestId);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data).toMatchObject({ status: 'completed', appAcknowledgments: [{ status: 'completed' }] });

    await moveTo(Date.parse(late.completionDeadline) + 1000);
    expectLate(await act(s, 'complete', late.requestId), completionMissed(late));
    await settle();

    const view = await detail(s, late.requestId);
    expect(view.status).toBe('failed');
    expect(view.appAcknowledgments).toEqual([expect.objectContaining({ status: 'failed', completedAt: null, errorMessage: completionMissed(late) })]);
    // No final notice past the completion deadline (the job sends none either).
    expect(received(s, late.requestId)).toHaveLength(1);
    const once = { notifications: [expect.objectContaining({ requestId: late.requestId, appId: s.app.appId, reason: 'completion_deadline' })], emails: 1 };
    expect(await notified(s)).toEqual(once);

    expect(await runJob()).toBe(0);
    expect(await notified(s)).toEqual(once);
    expect(received(s, late.requestId)).toHaveLength(1);
    expect((await detail(s, onTime.requestId)).status).toBe('completed');
  });

  it('acknowledged in time (1 s before the 30-day deadline), completed 1 s after the 90-day one: 409, failed for the completion deadline', async () => {
    const s = await oneApp();
    const r = await dataRequest(s, 'slow@example.com');
    await settle();
    await approach(s, Date.parse(r.acknowledgeDeadline) - 1000);
    expect((await act(s, 'acknowledge', r.requestId)).statusCode).toBe(200);

    await approach(s, Date.parse(r.completionDeadline) + 1000);
    expectLate(await act(s, 'complete', r.requestId), completionMissed(r));
    await settle();
    const view = await detail(s, r.requestId);
    expect(view.status).toBe('failed');
    expect(view.appAcknowledgments).toEqual([expect.objectContaining({ status: 'failed', acknowledgedAt: expect.any(String), errorMessage: completionMissed(r) })]);
    expect(await notified(s)).toEqual({ notifications: [expect.objectContaining({ requestId: r.requestId, reason: 'completion_deadline' })], emails: 1 });
    expect(received(s, r.requestId)).toHaveLength(1);
    expect(await runJob()).toBe(0);
    expect((await notified(s)).notifications).toHaveLength(1);
  });

  it('never acknowledged, completed 1 s after the 30-day deadline: 409, failed for the acknowledgment, with the final notice', async () => {
    const s = await oneApp();
    const r = await dataRequest(s, 'silent@example.com');
    await settle();
    await approach(s, Date.parse(r.acknowledgeDeadline) + 1000);
    expectLate(await act(s, 'complete', r.requestId), ackMissed(r));
    await settle();
    expect((await detail(s, r.requestId)).appAcknowledgments).toEqual([expect.objectContaining({ status: 'failed', completedAt: null, errorMessage: ackMissed(r) })]);
    expect(received(s, r.requestId)).toHaveLength(2);
    expect(await notified(s)).toEqual({ notifications: [expect.objectContaining({ requestId: r.requestId, reason: 'acknowledge_deadline' })], emails: 1 });
    expect(await runJob()).toBe(0);
    expect((await notified(s)).notifications).toHaveLength(1);
    expect(received(s, r.requestId)).toHaveLength(2);
  });
});

describe('C9.3 at the deadline instant exactly', () => {
  it('the app is on time, for the job and for its call alike', async () => {
    const s = await oneApp();
    const r = await dataRequest(s, 'instant@example.com');
    await settle();
    await approach(s, Date.parse(r.acknowledgeDeadline) - 1000);
    // The service clock held at the deadline itself.
    const at = Date.parse(r.acknowledgeDeadline);
    const held = vi.spyOn(h.clock, 'nowMs').mockReturnValue(at);
    try {
      expect(h.clock.now().toISOString()).toBe(r.acknowledgeDeadline);
      await runJob();
      expect((await detail(s, r.requestId)).appAcknowledgments).toEqual([expect.objectContaining({ status: 'pending', errorMessage: null })]);
      const ok = await act(s, 'acknowledge', r.requestId);
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json().data.appAcknowledgments).toEqual([expect.objectContaining({ status: 'acknowledged' })]);
    } finally {
      held.mockRestore();
    }
    expect((await notified(s)).notifications).toEqual([]);
    expect((await act(s, 'complete', r.requestId)).statusCode).toBe(200);
  });
});
