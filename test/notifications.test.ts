// Merchant notifications (C7.1 `GET /notifications`, C9.5, C14.8): the store's own, newest first,
// as an envelope list with count and pagination. The GDPR failures that create them are tested in
// gdpr-deadlines.test.ts; here the list itself and its four authentication checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { operatorToken, signupMerchant, signupPartner, staffToken } from './helpers/actors.js';
import { createNotification } from '../src/notifications/notifications.repo.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function notify(storeId: string, type: string, n: number) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    await h.advance(1);
    ids.push(await createNotification(h.db, { storeId, type, title: `${type} ${i}`, message: `message ${i}`, data: { i } }, h.clock.now()));
  }
  return ids;
}

describe('GET /notifications', () => {
  it('an empty store: an empty envelope list', async () => {
    const m = await signupMerchant(h);
    const res = await h.req('GET', '/notifications', { token: m.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 200, state: 'success', message: null, data: { notifications: [] }, count: 0,
      pagination: { page: 1, limit: 50, totalPages: 0, resultCount: 0, totalResult: 0 },
    });
  });

  it("the store's own notifications, newest first, paged, filtered by type", async () => {
    const m = await signupMerchant(h);
    const other = await signupMerchant(h);
    const failed = await notify(m.storeId, 'gdpr_app_failed', 3);
    const misc = await notify(m.storeId, 'something_else', 1);
    await notify(other.storeId, 'gdpr_app_failed', 2);

    const all = (await h.req('GET', '/notifications', { token: m.token })).json();
    expect(all.count).toBe(4);
    expect(all.data.notifications.map((n: any) => n.notificationId)).toEqual([...failed, ...misc].reverse());
    expect(all.data.notifications[1]).toEqual({
      notificationId: failed[2], storeId: m.storeId, type: 'gdpr_app_failed', title: 'gdpr_app_failed 2', message: 'message 2', data: { i: 2 },
      createdAt: expect.stringMatching(ISO),
    });

    const page = (await h.req('GET', '/notifications?limit=2&page=2', { token: m.token })).json();
    expect(page).toMatchObject({ count: 4, pagination: { page: 2, limit: 2, totalPages: 2, resultCount: 2, totalResult: 4 } });
    expect(page.data.notifications.map((n: any) => n.notificationId)).toEqual([failed[1], failed[0]]);

    const typed = (await h.req('GET', '/notifications?type=gdpr_app_failed', { token: m.token })).json();
    expect(typed.count).toBe(3);
    expect(typed.data.notifications.every((n: any) => n.type === 'gdpr_app_failed' && n.storeId === m.storeId)).toBe(true);
  });

  it('401 without or with a bad token; 403 for a partner; the operator names the store (400 without it); staff see their store', async () => {
    const m = await signupMerchant(h);
    await notify(m.storeId, 'gdpr_app_failed', 1);
    for (const token of [undefined, 'not-a-jwt']) {
      const res = await h.req('GET', '/notifications', { token });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ status: 401, state: 'error', data: null });
    }
    const partner = await signupPartner(h);
    expect((await h.req('GET', '/notifications', { token: partner.token })).statusCode).toBe(403);

    const op = await operatorToken(h);
    expect((await h.req('GET', '/notifications', { token: op })).statusCode).toBe(400);
    const byOp = await h.req('GET', `/notifications?storeId=${m.storeId}`, { token: op });
    expect(byOp.statusCode).toBe(200);
    expect(byOp.json().count).toBe(1);

    const staff = await staffToken(h, m, 'STAFF_ADMIN');
    expect((await h.req('GET', '/notifications', { token: staff })).json().count).toBe(1);
  });
});
