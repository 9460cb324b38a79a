// Content: pages (app-api.md Page, `POST /api/v1/pages.json`; merchant `POST /pages`, C7.1) and
// menus (app-api.md Menu, `GET /api/v1/menus.json`; merchant `POST /menus`, C14.5). Envelopes
// throughout, errors included (C5.1). Each test names its clause.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { operatorToken, signupMerchant, signupPartner, staffToken, storeWithApp } from './helpers/actors.js';
import { uuidv7 } from '../src/ids.js';
import { insertDemoStoreData } from '../src/seed/demo-store.js';
import { MAX_MENU_DEPTH } from '../src/content/menus.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const store = (scopes = ['read_content', 'write_content']) => storeWithApp(h, { scopes, tier: 'enterprise' });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const postPage = (token: string, body: unknown) => h.req('POST', '/api/v1/pages.json', { token, body });
const pageCount = async (storeId: string) => (await h.db.query('SELECT count(*)::int AS n FROM pages WHERE store_id = $1', [storeId])).rows[0].n;
const menuCount = async (storeId: string) => (await h.db.query('SELECT count(*)::int AS n FROM menus WHERE store_id = $1', [storeId])).rows[0].n;

// =============================================================================================

describe('POST /api/v1/pages.json (app-api.md Page; write_content)', () => {
  it('201 envelope, data.page field by field, count and pagination null', async () => {
    const s = await store();
    const res = await postPage(s.accessToken, {
      title: 'Shipping policy',
      handle: 'shipping-policy',
      content: '<h1>Shipping</h1>\n<p>We ship worldwide.</p>',
      templateSuffix: 'policy',
      link: 'https://example.com/policy',
      showtitle: false,
      seoTitle: 'Our shipping policy',
      seoDesc: 'How and where we ship',
      seoImage: 'https://cdn.example.com/share.png',
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-svc-api-version']).toBe('2026-06');
    expect(res.headers['x-ratelimit-limit']).toBe('500');
    const body = res.json();
    expect(body).toEqual({ status: 201, state: 'success', message: null, data: { page: expect.any(Object) }, count: null, pagination: null });
    expect(body.data.page).toEqual({
      pageId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      id: body.data.page.pageId,
      title: 'Shipping policy',
      handle: 'shipping-policy',
      templateSuffix: 'policy',
      link: 'https://example.com/policy',
      content: '<h1>Shipping</h1>\n<p>We ship worldwide.</p>',
      seoTitle: 'Our shipping policy',
      seoDesc: 'How and where we ship',
      seoImage: 'https://cdn.example.com/share.png',
      showtitle: false,
      storeId: s.merchant.storeId,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
  });

  it('defaults: handle null when omitted (no slug from the title), showtitle true, empty content, nulls', async () => {
    const s = await store();
    const res = await postPage(s.accessToken, { title: 'About Our Shop' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.page).toMatchObject({
      title: 'About Our Shop', handle: null, showtitle: true, content: '', templateSuffix: null, link: null, seoTitle: null, seoDesc: null, seoImage: null,
    });
    const { rows } = await h.db.query('SELECT handle, show_title FROM pages WHERE id = $1', [res.json().data.page.pageId]);
    expect(rows[0]).toEqual({ handle: null, show_title: true });
    // An explicit null is the same as omitting it.
    expect((await postPage(s.accessToken, { title: 'X', handle: null })).json().data.page.handle).toBeNull();
  });

  it('missing or blank title -> 400 envelope error; nothing stored', async () => {
    const s = await store();
    for (const body of [{}, { title: '' }, { title: '   \n' }, { title: null }, { content: '<p>no title</p>' }]) {
      expectEnvelopeError(await postPage(s.accessToken, body), 400, 'title');
    }
    expectEnvelopeError(await postPage(s.accessToken, { title: 42 }), 400, 'title');
    expect(await pageCount(s.merchant.storeId)).toBe(0);
  });

  it('wrong field types, malformed JSON or a non-object body -> 400 envelope error', async () => {
    const s = await store();
    for (const [body, field] of [[{ showtitle: 'no' }, 'showtitle'], [{ showtitle: null }, 'showtitle'], [{ content: 5 }, 'content'], [{ handle: ['a'] }, 'handle'], [{ seoImage: {} }, 'seoImage']] as const) {
      expectEnvelopeError(await postPage(s.accessToken, { title: 'T', ...body }), 400, field);
    }
    expectEnvelopeError(await h.req('POST', '/api/v1/pages.json', { token: s.accessToken, payload: '{"title":', headers: { 'content-type': 'application/json' } }), 400);
    expectEnvelopeError(await postPage(s.accessToken, ['title']), 400);
    expectEnvelopeError(await h.req('POST', '/api/v1/pages.json', { token: s.accessToken }), 400);
    expect(await pageCount(s.merchant.storeId)).toBe(0);
  });

  it('authentication: no token or a bad one 401, no write_content 403; envelope errors', async () => {
    const none = await postPage('', { title: 'T' });
    expectEnvelopeError(none, 401);
    expect(none.headers['x-svc-api-version']).toBe('2026-06');
    expectEnvelopeError(await postPage('svcat_never-issued', { title: 'T' }), 401);
    const readOnly = await store(['read_content']);
    expectEnvelopeError(await postPage(readOnly.accessToken, { title: 'T' }), 403);
    expect(await pageCount(readOnly.merchant.storeId)).toBe(0);
  });
});

describe('merchant POST /pages (C7.1)', () => {
  it('201 envelope whose data is the page in its App API shape, in the caller\'s store', async () => {
    const m = await signupMerchant(h);
    const res = await h.req('POST', '/pages', { token: m.token, body: { title: 'FAQ', content: '<p>Q&A</p>', storeId: uuidv7() } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ status: 201, state: 'success', message: null, count: null, pagination: null });
    expect(res.json().data).toMatchObject({ title: 'FAQ', handle: null, showtitle: true, content: '<p>Q&A</p>', storeId: m.storeId });
    expect(res.json().data.pageId).toBe(res.json().data.id);
    expect((await h.db.query('SELECT topic FROM events WHERE store_id = $1', [m.storeId])).rows).toEqual([]);
  });

  it('400 without a title; 401 without or with a bad token; 403 for a partner; the operator names the store', async () => {
    const m = await signupMerchant(h);
    expectEnvelopeError(await h.req('POST', '/pages', { token: m.token, body: { title: ' ' } }), 400, 'title');
    expectEnvelopeError(await h.req('POST', '/pages', { body: { title: 'T' } }), 401);
    expectEnvelopeError(await h.req('POST', '/pages', { token: 'bad', body: { title: 'T' } }), 401);
    expectEnvelopeError(await h.req('POST', '/pages', { token: (await signupPartner(h)).token, body: { title: 'T' } }), 403);
    const ops = await operatorToken(h);
    expectEnvelopeError(await h.req('POST', '/pages', { token: ops, body: { title: 'T' } }), 400, 'storeId');
    const res = await h.req('POST', '/pages', { token: ops, body: { title: 'Ops page', storeId: m.storeId } });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.storeId).toBe(m.storeId);
    expect(await pageCount(m.storeId)).toBe(1);
  });

  it('store staff (STAFF_ADMIN, MANAGER) create pages for their store', async () => {
    const m = await signupMerchant(h);
    for (const role of ['STAFF_ADMIN', 'MANAGER'] as const) {
      const token = await staffToken(h, m, role);
      const res = await h.req('POST', '/pages', { token, body: { title: role } });
      expect(res.statusCode).toBe(201);
      expect(res.json().data.storeId).toBe(m.storeId);
    }
  });
});

describe('merchant POST /menus (C7.1, C14.5: items nested in child)', () => {
  it('201 envelope with the menu and its nested items; handles default to slugs, order is the position', async () => {
    const m = await signupMerchant(h);
    const res = await h.req('POST', '/menus', {
      token: m.token,
      body: {
        name: 'Footer Menu',
        menuType: 'footer',
        child: [
          { name: 'Shop All', menuItemType: 'category', url: '/collections/all', child: [{ name: 'New In', menuItemType: 'customized', url: '/new' }] },
          { name: 'About', handle: 'about-us', menuItemType: 'page', url: '/pages/about-us' },
        ],
      },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ status: 201, state: 'success', message: null, count: null, pagination: null });
    const menu = res.json().data;
    const stamp = { createdAt: expect.stringMatching(ISO), updatedAt: expect.stringMatching(ISO) };
    expect(menu).toEqual({
      menuId: expect.any(String), name: 'Footer Menu', handle: 'footer-menu', menuType: 'footer', menuItemType: null, url: null,
      parentId: null, order: 0, ...stamp,
      child: [
        {
          menuId: expect.any(String), name: 'Shop All', handle: 'shop-all', menuType: null, menuItemType: 'category', url: '/collections/all',
          parentId: menu.menuId, order: 0, ...stamp,
          child: [{
            menuId: expect.any(String), name: 'New In', handle: 'new-in', menuType: null, menuItemType: 'customized', url: '/new',
            parentId: menu.child[0].menuId, order: 0, child: [], ...stamp,
          }],
        },
        {
          menuId: expect.any(String), name: 'About', handle: 'about-us', menuType: null, menuItemType: 'page', url: '/pages/about-us',
          parentId: menu.menuId, order: 1, child: [], ...stamp,
        },
      ],
    });
    expect(await menuCount(m.storeId)).toBe(4);
    // Content changes have no events (app-api.md Events).
    expect((await h.db.query('SELECT topic FROM events WHERE store_id = $1', [m.storeId])).rows).toEqual([]);
  });

  it('a handle is never empty nor ends on a separator: a name with no Latin letter or digit gets "menu"; a long one is cut between words', async () => {
    const m = await signupMerchant(h);
    const long = `${'a'.repeat(59)} tail`;
    const res = await h.req('POST', '/menus', { token: m.token, body: { name: '菜单', child: [{ name: long, url: '/x' }] } });
    expect(res.statusCode, res.body).toBe(201);
    const menu = res.json().data;
    expect(menu.handle).toBe('menu');
    expect(menu.child[0].handle).toBe('a'.repeat(59));
  });

  it('an item url is a path on the store or an http, https, mailto or tel URL', async () => {
    const m = await signupMerchant(h);
    const urls = ['/collections/all', 'collections/all', '#top', '?page=2', 'https://example.com/a', 'HTTP://example.com', 'mailto:shop@example.com', 'tel:+15550100', '/a:b'];
    const res = await h.req('POST', '/menus', { token: m.token, body: { name: 'Links', child: urls.map((url, i) => ({ name: `l${i}`, url })) } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.child.map((c: { url: string }) => c.url)).toEqual(urls);
  });

  it('invalid menus -> 400 envelope naming the field; nothing of the menu is stored', async () => {
    const m = await signupMerchant(h);
    const deep = (levels: number): any => (levels === 0 ? { name: 'leaf' } : { name: `l${levels}`, child: [deep(levels - 1)] });
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '  ' }, 'name'],
      [{ name: 'M', child: 'items' }, 'child'],
      [{ name: 'M', child: [{ name: 'ok' }, { url: '/x' }] }, 'child[1].name'],
      [{ name: 'M', child: [{ name: 'ok', child: [{ name: 'ok' }, 7] }] }, 'child[0].child[1]'],
      [{ name: 'M', child: [{ name: 'ok', url: 5 }] }, 'child[0].url'],
      // A storefront href (found in review: `javascript:` was stored, as a page's link is not).
      ...['javascript:alert(1)', 'JaVaScRiPt:alert(1)', ' javascript:alert(1)', 'java\tscript:alert(1)', '\u0001javascript:x', 'data:text/html,<script>x</script>', 'vbscript:msgbox(1)']
        .map((url): [unknown, string] => [{ name: 'M', child: [{ name: 'ok', child: [{ name: 'bad', url }] }] }, 'child[0].child[0].url']),
      [{ name: 'M', child: [deep(MAX_MENU_DEPTH)] }, 'levels'],
    ];
    for (const [body, field] of cases) expectEnvelopeError(await h.req('POST', '/menus', { token: m.token, body }), 400, field);
    expect(await menuCount(m.storeId)).toBe(0);
    // The deepest nesting allowed is accepted.
    const ok = await h.req('POST', '/menus', { token: m.token, body: { name: 'M', child: [deep(MAX_MENU_DEPTH - 1)] } });
    expect(ok.statusCode).toBe(201);
    expect(await menuCount(m.storeId)).toBe(MAX_MENU_DEPTH + 1);
  });

  it('401 without or with a bad token; 403 for a partner', async () => {
    expectEnvelopeError(await h.req('POST', '/menus', { body: { name: 'M' } }), 401);
    expectEnvelopeError(await h.req('POST', '/menus', { token: 'x.y.z', body: { name: 'M' } }), 401);
    expectEnvelopeError(await h.req('POST', '/menus', { token: (await signupPartner(h)).token, body: { name: 'M' } }), 403);
  });
});

describe('GET /api/v1/menus.json (app-api.md: envelope data.menus[], no paging; read_content)', () => {
  it('the store\'s menus in creation order, items nested in child; count and pagination null', async () => {
    const s = await store();
    const header = (await h.req('POST', '/menus', { token: s.merchant.token, body: { name: 'Header', menuType: 'header', child: [{ name: 'Home', url: '/' }, { name: 'Sale', url: '/sale', child: [{ name: 'Shoes', url: '/sale/shoes' }] }] } })).json().data;
    const footer = (await h.req('POST', '/menus', { token: s.merchant.token, body: { name: 'Footer', menuType: 'footer' } })).json().data;
    const res = await h.req('GET', '/api/v1/menus.json?page=2&limit=1', { token: s.accessToken });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 200, state: 'success', message: null, data: { menus: [header, footer] }, count: null, pagination: null });
    expect([header.order, footer.order]).toEqual([0, 1]);
  });

  it('an empty store has data.menus []; another store\'s menus never show', async () => {
    const s = await store();
    const other = await store();
    await h.req('POST', '/menus', { token: other.merchant.token, body: { name: 'Theirs' } });
    expect((await h.req('GET', '/api/v1/menus.json', { token: s.accessToken })).json().data).toEqual({ menus: [] });
  });

  it('authentication: no token or a bad one 401, no read_content 403; envelope errors', async () => {
    expectEnvelopeError(await h.req('GET', '/api/v1/menus.json'), 401);
    expectEnvelopeError(await h.req('GET', '/api/v1/menus.json', { token: 'svcat_nope' }), 401);
    const writeOnly = await store(['write_content']);
    expectEnvelopeError(await h.req('GET', '/api/v1/menus.json', { token: writeOnly.accessToken }), 403);
  });
});

describe('demo data (C1.5)', () => {
  it('the demo store has its About us page and its main menu with nested items', async () => {
    const s = await store();
    await h.db.transaction((tx) => insertDemoStoreData(tx, s.merchant.storeId, h.clock.now()));
    const menus = (await h.req('GET', '/api/v1/menus.json', { token: s.accessToken })).json().data.menus;
    expect(menus).toHaveLength(1);
    expect(menus[0]).toMatchObject({ name: 'Main menu', handle: 'main-menu', menuType: 'header', parentId: null });
    expect(menus[0].child.map((c: any) => [c.name, c.menuItemType, c.url, c.order])).toEqual([
      ['Shop', 'category', '/collections/all', 0],
      ['About us', 'page', '/pages/about-us', 1],
    ]);
    const { rows } = await h.db.query('SELECT title, handle, show_title FROM pages WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows).toEqual([{ title: 'About us', handle: 'about-us', show_title: true }]);
  });
});
