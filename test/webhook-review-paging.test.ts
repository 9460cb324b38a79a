// Review findings on App API webhook subscriptions (C6.4):
//  - `GET /api/v1/webhooks.json` is a bare-body list, so it pages like the others (C5.4: `page` and
//    `limit`, default 50, maximum 250, clamped; `Link` rel="next" while more exist, rel="previous"
//    after the first page). It returned every row, and an installation may hold 100.
//  - A target URL's `#fragment` is never sent (the client sends path and query), so it is dropped
//    when the address is saved: `...?q#a` and `...?q#b` are one address, and the second
//    subscription to the same topic is the duplicate (C6.4 422), not a second delivery of every
//    event to the same URL under another X-SVC-Webhook-Id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { subscribe, webhookStore } from './fixtures/webhook-setup.js';
import { MAX_SUBSCRIPTIONS_PER_INSTALLATION } from '../src/webhooks/subscriptions.service.js';

let h: Harness;
beforeAll(async () => {
  h = await createWebhookHarness();
});
afterAll(() => h?.close());

const BASE = 'http://svc.test';
const PATH = '/api/v1/webhooks.json';
const link = (query: string, rel: string) => `<${BASE}${PATH}?${query}>; rel="${rel}"`;
/** Nothing listens there; no delivery is run in this file. */
const TARGET = 'http://127.0.0.1:9';

describe('C5.4 / C6.4 GET /api/v1/webhooks.json pages with page, limit and the Link header', () => {
  it('60 subscriptions: 50 then 10, rel="next" then rel="previous"; limit clamped to 250; bad values default', async () => {
    expect(MAX_SUBSCRIPTIONS_PER_INSTALLATION).toBeGreaterThanOrEqual(60);
    const s = await webhookStore(h);
    const other = await webhookStore(h);
    await subscribe(h, other.accessToken, 'orders/create', `${TARGET}/other`); // another installation's: never listed
    for (let i = 0; i < 60; i++) {
      await subscribe(h, s.accessToken, 'orders/create', `${TARGET}/hook-${i}`);
      if (i % 7 === 0) await h.advance(1); // several created_at values, several rows sharing one
    }
    const get = (query = '') => h.req('GET', `${PATH}${query}`, { token: s.accessToken });
    const ids = (res: { json(): any }) => res.json().webhooks.map((w: any) => w.id);

    // The whole list in one page (limit 300 is clamped to 250, and 60 fit): no Link header.
    const all = await get('?limit=300');
    expect(all.statusCode).toBe(200);
    expect(Object.keys(all.json())).toEqual(['webhooks']);
    expect(ids(all)).toHaveLength(60);
    expect(new Set(ids(all)).size).toBe(60);
    expect(all.headers.link).toBeUndefined();
    for (const w of all.json().webhooks) expect(w).not.toHaveProperty('secret');
    // Newest first, as before.
    const created = all.json().webhooks.map((w: any) => w.created_at);
    expect(created).toEqual([...created].sort().reverse());

    const p1 = await get();
    expect(p1.statusCode).toBe(200);
    expect(ids(p1)).toEqual(ids(all).slice(0, 50));
    expect(p1.headers.link).toBe(link('page=2&limit=50', 'next'));

    const p2 = await get('?page=2');
    expect(ids(p2)).toEqual(ids(all).slice(50));
    expect(p2.headers.link).toBe(link('page=1&limit=50', 'previous'));

    // Smaller pages tile the list exactly (a stable order: no row twice, none missed).
    const tiled: string[] = [];
    for (let page = 1; page <= 3; page++) tiled.push(...ids(await get(`?limit=25&page=${page}`)));
    expect(tiled).toEqual(ids(all));
    const mid = await get('?limit=25&page=2');
    expect(mid.headers.link).toBe(`${link('page=3&limit=25', 'next')}, ${link('page=1&limit=25', 'previous')}`);

    // The clamp shows in the links: limit=300 pages by 250.
    const beyond = await get('?limit=300&page=2');
    expect(beyond.statusCode).toBe(200);
    expect(beyond.json()).toEqual({ webhooks: [] });
    expect(beyond.headers.link).toBe(link('page=1&limit=250', 'previous'));

    // Values that are not whole numbers from 1 fall back to the defaults, as on the other bare lists.
    for (const q of ['limit=0', 'limit=-5', 'limit=abc', 'page=0&limit=', 'page=-1', 'page=abc']) {
      const res = await get(`?${q}`);
      expect(res.statusCode, q).toBe(200);
      expect(ids(res), q).toEqual(ids(all).slice(0, 50));
      expect(res.headers.link, q).toBe(link('page=2&limit=50', 'next'));
    }
    // An absurd page is an empty page, not a server error.
    const huge = await get('?page=99999999999999999999&limit=250');
    expect(huge.statusCode).toBe(200);
    expect(huge.json().webhooks).toEqual([]);
  });
});

describe('C6.4 duplicate rule: a fragment is not part of the address (it is never sent)', () => {
  it('?q#a then ?q#b on the same topic: the second is the 422 duplicate; the stored address has no fragment', async () => {
    const s = await webhookStore(h);
    const post = (address: string, topic = 'orders/create') =>
      h.req('POST', PATH, { token: s.accessToken, body: { webhook: { topic, address } } });

    const first = await post(`${TARGET}/s?q=1#a`);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json().webhook.address).toBe(`${TARGET}/s?q=1`);

    const second = await post(`${TARGET}/s?q=1#b`);
    expect(second.statusCode, second.body).toBe(422);
    expect(second.json()).toEqual({ errors: { address: ['already has a subscription to this topic'] } });
    // Without the fragment at all, and with an empty one: the same address.
    expect((await post(`${TARGET}/s?q=1`)).statusCode).toBe(422);
    expect((await post(`${TARGET}/s?q=1#`)).statusCode).toBe(422);

    // Another topic to the same URL is a subscription of its own, stored without the fragment.
    const other = await post(`${TARGET}/s?q=1#c`, 'orders/updated');
    expect(other.statusCode, other.body).toBe(201);
    expect(other.json().webhook.address).toBe(`${TARGET}/s?q=1`);

    const list = (await h.req('GET', PATH, { token: s.accessToken })).json().webhooks;
    expect(list.map((w: any) => w.address)).toEqual([`${TARGET}/s?q=1`, `${TARGET}/s?q=1`]);
    const { rows } = await h.db.query<{ address: string }>(
      "SELECT address FROM webhook_subscriptions WHERE address LIKE '%#%' OR address LIKE $1", [`${TARGET}/s%`],
    );
    expect(rows.map((r) => r.address)).toEqual([`${TARGET}/s?q=1`, `${TARGET}/s?q=1`]);
  });
});
