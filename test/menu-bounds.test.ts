// A store's menus are bounded (docs/decisions.md Content, "A store has at most 100 menus and 5,000
// menu items"): `GET /api/v1/menus.json` answers all of them in one response (app-api.md: no
// paging). Past a bound, merchant `POST /menus` is a 400 envelope (C5.1, C7.1) that writes nothing,
// also when creates race at the bound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { signupMerchant, type Merchant } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { MAX_STORE_MENU_ITEMS, MAX_STORE_MENUS } from '../src/content/menus.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

const counts = async (storeId: string) =>
  (await h.db.query<{ menus: number; items: number }>(
    `SELECT (count(*) FILTER (WHERE parent_id IS NULL))::int AS menus, (count(*) FILTER (WHERE parent_id IS NOT NULL))::int AS items
       FROM menus WHERE store_id = $1`,
    [storeId],
  )).rows[0];

/** Fills the store with `menus` menus (the first holding `items` items), written directly: the set-up, not the subject. */
async function fill(m: Merchant, menus: number, items = 0) {
  await h.db.query(
    `INSERT INTO menus (id, store_id, name, handle, sort_order, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'Filler ' || n, 'filler-' || n, n - 1, now(), now() FROM generate_series(1, $2::int) AS n`,
    [m.storeId, menus],
  );
  if (items) {
    await h.db.query(
      `INSERT INTO menus (id, store_id, parent_id, name, handle, sort_order, created_at, updated_at)
       SELECT gen_random_uuid(), $1, (SELECT id FROM menus WHERE store_id = $1 AND parent_id IS NULL ORDER BY sort_order LIMIT 1),
              'Item ' || n, 'item-' || n, n - 1, now(), now() FROM generate_series(1, $2::int) AS n`,
      [m.storeId, items],
    );
  }
}

const menu = (m: Merchant, items = 0, name = 'Menu') =>
  h.req('POST', '/menus', { token: m.token, body: { name, child: Array.from({ length: items }, (_, i) => ({ name: `Item ${i}`, url: `/x/${i}` })) } });

describe(`a store has at most ${MAX_STORE_MENUS} menus`, () => {
  it('the last one is made; one more is a 400 envelope and writes nothing; another store is not affected', async () => {
    const m = await signupMerchant(h);
    await fill(m, MAX_STORE_MENUS - 1);
    const last = await menu(m, 1);
    expect(last.statusCode, last.body).toBe(201);
    expect(last.json().data.order).toBe(MAX_STORE_MENUS - 1);
    expectEnvelopeError(await menu(m, 1), 400, `a store has at most ${MAX_STORE_MENUS} menus`);
    expect(await counts(m.storeId)).toEqual({ menus: MAX_STORE_MENUS, items: 1 });
    const other = await signupMerchant(h);
    expect((await menu(other)).statusCode).toBe(201);
  });

  it('creates racing at the bound: exactly as many pass as there is room for', async () => {
    const m = await signupMerchant(h);
    await fill(m, MAX_STORE_MENUS - 2);
    const res = await Promise.all(Array.from({ length: 6 }, (_, i) => menu(m, 2, `Racer ${i}`)));
    expect(res.map((r) => r.statusCode).sort()).toEqual([201, 201, 400, 400, 400, 400]);
    for (const r of res.filter((r) => r.statusCode === 400)) expectEnvelopeError(r, 400, `a store has at most ${MAX_STORE_MENUS} menus`);
    expect(await counts(m.storeId)).toEqual({ menus: MAX_STORE_MENUS, items: 4 });
  });
});

describe(`a store has at most ${MAX_STORE_MENU_ITEMS} menu items across its menus`, () => {
  it('a menu that would take the store past it is a 400 envelope naming both counts; one that fits, and an empty menu, are made', async () => {
    const m = await signupMerchant(h);
    await fill(m, 1, MAX_STORE_MENU_ITEMS - 10);
    expectEnvelopeError(await menu(m, 11), 400,
      `a store has at most ${MAX_STORE_MENU_ITEMS} menu items in all; it has ${MAX_STORE_MENU_ITEMS - 10} and this menu has 11`);
    expect(await counts(m.storeId)).toEqual({ menus: 1, items: MAX_STORE_MENU_ITEMS - 10 });
    expect((await menu(m, 10)).statusCode).toBe(201);
    expect((await menu(m, 0)).statusCode).toBe(201);
    expect(await counts(m.storeId)).toEqual({ menus: 3, items: MAX_STORE_MENU_ITEMS });
  });

  it('creates racing at the bound: the items of the menus made never pass it', async () => {
    const m = await signupMerchant(h);
    await fill(m, 1, MAX_STORE_MENU_ITEMS - 10);
    const res = await Promise.all(Array.from({ length: 4 }, (_, i) => menu(m, 5, `Racer ${i}`)));
    expect(res.map((r) => r.statusCode).sort()).toEqual([201, 201, 400, 400]);
    expect(await counts(m.storeId)).toEqual({ menus: 3, items: MAX_STORE_MENU_ITEMS });
  });
});

// Merchant `DELETE /menus/{id}` (not in the spec; docs/decisions.md Content): without it a store at
// its bounds could never make another menu.
describe('a merchant deletes a menu', () => {
  const nested = (m: Merchant) => h.req('POST', '/menus', {
    token: m.token, body: { name: 'Main', child: [{ name: 'Shop', url: '/shop', child: [{ name: 'Shoes', url: '/shoes' }] }, { name: 'About', url: '/about' }] },
  });

  it('with all its items: 200 with the menu as it was; the store at its bound can make one again', async () => {
    const m = await signupMerchant(h);
    await fill(m, MAX_STORE_MENUS - 1);
    const made = await nested(m);
    expect(made.statusCode, made.body).toBe(201);
    const menuId = made.json().data.menuId;
    expectEnvelopeError(await menu(m), 400, `a store has at most ${MAX_STORE_MENUS} menus`);

    const res = await h.req('DELETE', `/menus/${menuId}`, { token: m.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual(made.json().data);
    expect(await counts(m.storeId)).toEqual({ menus: MAX_STORE_MENUS - 1, items: 0 });
    expect((await h.db.query('SELECT 1 FROM menus WHERE id = $1', [menuId])).rowCount).toBe(0);
    expect((await menu(m)).statusCode).toBe(201);
    expectEnvelopeError(await h.req('DELETE', `/menus/${menuId}`, { token: m.token }), 404, 'Menu not found');
  });

  // Review: two deletes of one menu at once (a double click): one deletes it, the other is the 404
  // of a menu already gone, never a 500 or a second 200.
  it('two deletes of one menu at once: one 200, one 404', async () => {
    const m = await signupMerchant(h);
    for (let round = 0; round < 5; round++) {
      const made = (await nested(m)).json().data;
      const answers = await Promise.all([0, 1].map(() => h.req('DELETE', `/menus/${made.menuId}`, { token: m.token })));
      expect(answers.map((r) => r.statusCode).sort(), answers.map((r) => r.body).join('\n')).toEqual([200, 404]);
      expect(answers.find((r) => r.statusCode === 200)!.json().data).toEqual(made);
      expectEnvelopeError(answers.find((r) => r.statusCode === 404)!, 404, 'Menu not found');
    }
    expect(await counts(m.storeId)).toEqual({ menus: 0, items: 0 });
  });

  it("an item's id, an unknown id or another value is not found; another store's menu is 403 and stays", async () => {
    const m = await signupMerchant(h);
    const made = (await nested(m)).json().data;
    for (const id of [made.child[0].menuId, '0190a3c4-0000-7000-8000-000000000000', 'not-a-menu', '1']) {
      expectEnvelopeError(await h.req('DELETE', `/menus/${id}`, { token: m.token }), 404, 'Menu not found');
    }
    const other = await signupMerchant(h);
    expectEnvelopeError(await h.req('DELETE', `/menus/${made.menuId}`, { token: other.token }), 403);
    expect(await counts(m.storeId)).toEqual({ menus: 1, items: 3 });
  });
});
