// The GDPR deadline job (app-api.md GDPR request status; C9.3, C9.5, C12.2, C14.11) on the test
// clock: past 30 days, past 90 days, the 7-day reminder window, the final notice, the merchant's
// notification and email, the daily schedule, and the dispatch recovery. Each test leaves no app
// owing anything, so the next test's job runs see only its own requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { createTestApp, installApp, signupPartner, storeWithApp, type Merchant, type TestApp } from './helpers/actors.js';
import { gdprAppBody } from './helpers/gdpr.js';
import { ensureOperator } from '../src/accounts/accounts.service.js';
import { startReceiver, verifySignature, type Receiver } from './fixtures/webhook-receiver.js';
import { gdprDispatcher, recoverDispatches } from '../src/gdpr/gdpr.dispatch.js';
import { createGdprRequest } from '../src/gdpr/gdpr.service.js';
import { runDailyDeadlines } from '../src/gdpr/gdpr.jobs.js';
import { flushMail } from '../src/mail/mail.js';

let h: Harness;
let rx: Receiver;
const OPERATOR = 'gdpr-ops@example.com';
beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver();
  await ensureOperator(h.deps, OPERATOR, 'operator-password');
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const DAY = 86_400;

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
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
let seq = 0;
const settle = () => gdprDispatcher(h.deps).settle();

/** A store with two apps of different developers, each with its own receiver paths. */
async function twoApps() {
  const tag = `d${++seq}`;
  const a = await storeWithApp(h, gdprAppBody(rx.url, `${tag}a`));
  const partner = await signupPartner(h);
  const appB = await createTestApp(h, partner.token, gdprAppBody(rx.url, `${tag}b`));
  const b = { app: appB, ...(await installApp(h, a.merchant, appB)) };
  const at = h.clock.nowMs();
  issued.set(a.merchant.email, { token: a.merchant.token, at });
  issued.set(a.app.appId, { token: a.accessToken, at });
  issued.set(appB.appId, { token: b.accessToken, at });
  return { merchant: a.merchant, a, b, pathA: `/${tag}a`, pathB: `/${tag}b` };
}

const received = (path: string, requestId: string) => rx.received.filter((r) => r.path === path && r.headers['x-svc-gdpr-request-id'] === requestId);
const post = (token: string, path: string, body?: unknown) => h.req('POST', `/apps/gdpr/${path}`, { token, body });
const detail = async (m: Merchant, id: string) => (await h.req('GET', `/apps/gdpr/requests/${id}`, { token: await merchantToken(m) })).json().data;
const stateOf = (view: any) => Object.fromEntries(view.appAcknowledgments.map((a: any) => [a.appId, a.status]));

/** C12.2, as the operator runs it. */
async function runJob(): Promise<number> {
  const res = await h.req('POST', '/apps/admin/jobs/gdpr-deadlines/run', { token: await fresh('op', () => login(OPERATOR, 'operator-password')) });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().data.job).toBe('gdpr-deadlines');
  return res.json().data.processed;
}

async function notifications(m: Merchant) {
  const res = await h.req('GET', '/notifications', { token: await merchantToken(m) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function emails(m: Merchant) {
  await flushMail();
  const res = await h.req('GET', `/apps/admin/emails?to=${encodeURIComponent(m.email)}`, { token: await fresh('op', () => login(OPERATOR, 'operator-password')) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.emails as any[];
}

describe('C9.3 acknowledge deadline (pending, dispatched -> failed)', () => {
  it('past 30 days: the lagging app and the request fail, the app gets a final notice, the merchant a notification and an email', async () => {
    const s = await twoApps();
    const { requestId } = (await post(await merchantToken(s.merchant), 'data-request', { customerEmail: 'ada@example.com' })).json().data;
    await settle();
    expect((await post(await appToken(s.merchant, s.a.app), `acknowledge/${requestId}`)).statusCode).toBe(200);

    await h.advance(29 * DAY);
    expect(await runJob()).toBe(0);
    expect((await detail(s.merchant, requestId)).status).toBe('dispatched');

    await h.advance(DAY + 3600);
    expect(await runJob()).toBe(1);
    const view = await detail(s.merchant, requestId);
    expect(view.status).toBe('failed');
    expect(view.appAcknowledgments).toEqual([
      { appId: s.a.app.appId, appName: expect.any(String), status: 'acknowledged', acknowledgedAt: expect.stringMatching(ISO), completedAt: null, errorMessage: null, dataExportUrl: null },
      { appId: s.b.app.appId, appName: expect.any(String), status: 'failed', acknowledgedAt: null, completedAt: null, errorMessage: expect.stringContaining('acknowledge deadline'), dataExportUrl: null },
    ]);

    // The final notice: the same body again, a new webhook id, signed with B's client secret; A gets none.
    const toB = received(`${s.pathB}/data`, requestId);
    expect(toB).toHaveLength(2);
    expect(toB[1].raw.equals(toB[0].raw)).toBe(true);
    expect(toB[1].headers['x-svc-webhook-id']).not.toBe(toB[0].headers['x-svc-webhook-id']);
    expect(toB[1].headers).toMatchObject({ 'x-svc-topic': 'customers/data_request', 'x-svc-gdpr-request-id': requestId, 'x-svc-delivery-attempt': '1' });
    expect(verifySignature(toB[1].raw, toB[1].headers['x-svc-hmac-sha256'], s.b.app.clientSecret)).toBe(true);
    expect(received(`${s.pathA}/data`, requestId)).toHaveLength(1);

    // C9.5: a notification and an email for the merchant.
    const list = await notifications(s.merchant);
    expect(list).toMatchObject({ status: 200, state: 'success', count: 1, pagination: { page: 1, limit: 50, totalPages: 1, resultCount: 1, totalResult: 1 } });
    expect(list.data.notifications).toEqual([{
      notificationId: expect.any(String), storeId: s.merchant.storeId, type: 'gdpr_app_failed', title: expect.any(String), message: expect.any(String),
      data: { requestId, requestType: 'data_request', appId: s.b.app.appId, appName: expect.any(String), reason: 'acknowledge_deadline' },
      createdAt: expect.stringMatching(ISO),
    }]);
    const mail = await emails(s.merchant);
    expect(mail).toEqual([{ emailId: expect.any(String), to: s.merchant.email, subject: expect.any(String), template: 'gdpr_app_failed', status: 'logged', createdAt: expect.stringMatching(ISO) }]);

    // A second run the same day changes nothing and sends nothing.
    expect(await runJob()).toBe(0);
    expect(received(`${s.pathB}/data`, requestId)).toHaveLength(2);
    expect((await notifications(s.merchant)).count).toBe(1);

    // A failed app's state is final; the other app may still complete, the request stays failed.
    const late = await post(await appToken(s.merchant, s.b.app), `acknowledge/${requestId}`);
    expect(late.statusCode).toBe(409);
    expect(late.json()).toMatchObject({ status: 409, state: 'error', data: null });
    expect((await post(await appToken(s.merchant, s.a.app), `complete/${requestId}`)).json().data).toMatchObject({ status: 'failed' });
  });

  it('a request still pending (its dispatch not finished) fails at the acknowledge deadline too', async () => {
    let hold = true;
    const slow = await startReceiver(() => (hold ? 'hang' : { status: 200 }));
    try {
      const s = await storeWithApp(h, { scopes: ['read_shop'], gdprUrls: { shopRedact: `${slow.url}/shop` } });
      const { requestId } = (await h.req('POST', '/apps/gdpr/shop-redact', { token: await merchantToken(s.merchant) })).json().data;
      for (let i = 0; i < 800 && slow.received.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect((await detail(s.merchant, requestId)).status).toBe('pending');
      hold = false;
      await h.advance(30 * DAY + 3600);
      expect(await runJob()).toBe(1);
      const view = await detail(s.merchant, requestId);
      expect(view.status).toBe('failed');
      expect(stateOf(view)).toEqual({ [s.app.appId]: 'failed' });
      // The final notice went out (the first delivery is still hanging).
      expect(slow.received).toHaveLength(2);
      await slow.close();
      await settle();
      // The first dispatch finishing afterwards does not undo the failure.
      expect((await detail(s.merchant, requestId)).status).toBe('failed');
    } finally {
      await slow.close().catch(() => {});
    }
  });
});

describe('C9.3 completion deadline (dispatched, acknowledged -> failed)', () => {
  it('past 90 days: apps that acknowledged but did not complete fail, and the request with them', async () => {
    const s = await twoApps();
    const { requestId } = (await post(await merchantToken(s.merchant), 'customer-redact', { customerEmail: 'grace@example.com' })).json().data;
    await settle();
    await post(await appToken(s.merchant, s.a.app), `acknowledge/${requestId}`);
    await post(await appToken(s.merchant, s.b.app), `complete/${requestId}`);
    expect((await detail(s.merchant, requestId)).status).toBe('acknowledged');

    // Day 89: reminders only (A has not completed).
    await h.advance(89 * DAY);
    expect(await runJob()).toBe(1);
    expect((await detail(s.merchant, requestId)).status).toBe('acknowledged');

    await h.advance(DAY + 3600);
    expect(await runJob()).toBe(1);
    const view = await detail(s.merchant, requestId);
    expect(view.status).toBe('failed');
    expect(view.appAcknowledgments.find((a: any) => a.appId === s.a.app.appId)).toMatchObject({ status: 'failed', errorMessage: expect.stringContaining('completion deadline') });
    expect(stateOf(view)[s.b.app.appId]).toBe('completed');
    // No final notice past the completion deadline: A got the first webhook and one reminder only.
    expect(received(`${s.pathA}/redact`, requestId)).toHaveLength(2);
    const list = await notifications(s.merchant);
    expect(list.data.notifications.map((n: any) => [n.data.appId, n.data.reason])).toEqual([[s.a.app.appId, 'completion_deadline']]);
    expect((await emails(s.merchant)).map((e) => e.template)).toEqual(['gdpr_app_failed']);
    expect(await runJob()).toBe(0);
  });

  it('one run after a jump past both deadlines: the pending app fails with a final notice, the acknowledged one without', async () => {
    const s = await twoApps();
    const { requestId } = (await post(await merchantToken(s.merchant), 'data-request', { customerEmail: 'jump@example.com' })).json().data;
    await settle();
    await post(await appToken(s.merchant, s.a.app), `acknowledge/${requestId}`);
    expect((await detail(s.merchant, requestId)).status).toBe('dispatched');
    await h.advance(91 * DAY);
    expect(await runJob()).toBe(1);
    const view = await detail(s.merchant, requestId);
    expect(view.status).toBe('failed');
    expect(stateOf(view)).toEqual({ [s.a.app.appId]: 'failed', [s.b.app.appId]: 'failed' });
    expect(received(`${s.pathB}/data`, requestId)).toHaveLength(2);
    expect(received(`${s.pathA}/data`, requestId)).toHaveLength(1);
    const reasons = (await notifications(s.merchant)).data.notifications.map((n: any) => `${n.data.appId} ${n.data.reason}`).sort();
    expect(reasons).toEqual([`${s.a.app.appId} completion_deadline`, `${s.b.app.appId} acknowledge_deadline`].sort());
    expect(await emails(s.merchant)).toHaveLength(2);
  });
});

describe('C9.3, C14.11 reminders in the last 7 days', () => {
  it('once per request and app per UTC day, one after a multi-day jump, only to apps not yet completed', async () => {
    const s = await twoApps();
    const { requestId } = (await post(await merchantToken(s.merchant), 'data-request', { customerEmail: 'remind@example.com' })).json().data;
    await settle();
    await post(await appToken(s.merchant, s.a.app), `acknowledge/${requestId}`);
    await post(await appToken(s.merchant, s.b.app), `complete/${requestId}`, { dataExportUrl: 'https://b.example.com/export.zip' });
    const countA = () => received(`${s.pathA}/data`, requestId).length;
    const countB = () => received(`${s.pathB}/data`, requestId).length;

    // Day 82: more than 7 days before the completion deadline.
    await h.advance(82 * DAY);
    expect(await runJob()).toBe(0);
    expect(countA()).toBe(1);

    // Day 84: in the window.
    await h.advance(2 * DAY);
    expect(await runJob()).toBe(1);
    expect(countA()).toBe(2);
    const [first, reminder] = received(`${s.pathA}/data`, requestId);
    expect(reminder.raw.equals(first.raw)).toBe(true);
    expect(verifySignature(reminder.raw, reminder.headers['x-svc-hmac-sha256'], s.a.app.clientSecret)).toBe(true);
    // The same UTC day: nothing more, however often the job runs.
    expect(await runJob()).toBe(0);
    expect(await runJob()).toBe(0);
    expect(countA()).toBe(2);

    // The next day: one more.
    await h.advance(DAY);
    expect(await runJob()).toBe(1);
    expect(countA()).toBe(3);
    // A jump of three days, one run: one reminder.
    await h.advance(3 * DAY);
    expect(await runJob()).toBe(1);
    expect(countA()).toBe(4);
    // The completed app got none.
    expect(countB()).toBe(1);
    const log = (await h.req('GET', `/apps/developer/${s.a.app.appId}/webhook-deliveries`, { token: await fresh(s.a.partner.email, () => login(s.a.partner.email, 'correct-horse')) })).json().data.deliveries;
    expect(log.map((d: any) => d.source)).toEqual(['gdpr', 'gdpr', 'gdpr', 'gdpr']);

    await post(await appToken(s.merchant, s.a.app), `complete/${requestId}`);
    expect((await detail(s.merchant, requestId)).status).toBe('completed');
    expect(await runJob()).toBe(0);
    expect((await notifications(s.merchant)).count).toBe(0);
  });
});

describe('platform-side erasure after a failure', () => {
  it('customers/redact completed by one app and failed by the other: the platform erases its copy', async () => {
    const s = await twoApps();
    const email = `erase-${++seq}@example.com`;
    const c = await h.req('POST', '/customers', { token: await merchantToken(s.merchant), body: { email, first_name: 'Erin', last_name: 'Erased', phone: '+15550000' } });
    expect(c.statusCode, c.body).toBe(201);
    const customerId = c.json().data.id;
    const { requestId } = (await post(await merchantToken(s.merchant), 'customer-redact', { customerId })).json().data;
    await settle();
    await post(await appToken(s.merchant, s.a.app), `complete/${requestId}`);
    expect((await h.db.query('SELECT email FROM customers WHERE id = $1', [customerId])).rows[0].email).toBe(email);
    await h.advance(31 * DAY);
    expect(await runJob()).toBe(1);
    expect((await detail(s.merchant, requestId)).status).toBe('failed');
    const row = (await h.db.query('SELECT email, name, phone FROM customers WHERE id = $1', [customerId])).rows[0];
    expect(row).toEqual({ email: `redacted-${customerId}@redacted.invalid`, name: '', phone: null });
  });
});

describe('scheduling and recovery', () => {
  it('the daily run happens once per UTC day of the service clock, whoever asks (job_runs)', async () => {
    const key = () => `day:${h.clock.now().toISOString().slice(0, 10)}`;
    const first = await runDailyDeadlines(h.deps);
    const second = await runDailyDeadlines(h.deps);
    expect(first).toBe(true);
    expect(second).toBe(false);
    const { rows } = await h.db.query(`SELECT finished_at FROM job_runs WHERE job = 'gdpr-deadlines' AND period_key = $1`, [key()]);
    expect(rows).toHaveLength(1);
    expect(rows[0].finished_at).not.toBeNull();
    await h.advance(DAY);
    expect(await Promise.all([runDailyDeadlines(h.deps), runDailyDeadlines(h.deps)])).toEqual(expect.arrayContaining([true, false]));
    expect(await runDailyDeadlines(h.deps)).toBe(false);
  });

  it('a request whose dispatcher died is sent and marked dispatched by the recovery', async () => {
    const s = await storeWithApp(h, { scopes: ['read_shop'], gdprUrls: { shopRedact: `${rx.url}/recover/shop` } });
    // The request and its deliveries committed, but nothing sent (as if the process died there).
    const created = await createGdprRequest(h.deps, s.merchant.storeId, 'shop_redact', {}, null);
    expect(await recoverDispatches(h.deps)).toBe(0); // too recent: its dispatcher may still be at work
    await h.advance(300);
    expect(await recoverDispatches(h.deps)).toBe(1);
    expect(received('/recover/shop', created.requestId)).toHaveLength(1);
    expect((await detail(s.merchant, created.requestId)).status).toBe('dispatched');
    await post(await appToken(s.merchant, s.app), `complete/${created.requestId}`);
  });
});
