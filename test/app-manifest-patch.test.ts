// The app manifest on the developer API (C3.1, C3.2, C11.1): a PATCH of `extensions` merges by key
// (JSON Merge Patch one level down, docs/decisions.md), and every text and list a developer can
// store through the app body has a bound, refused past it with a 400 envelope naming the field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp, installApp, signupMerchant, signupPartner, unique, type Merchant, type TestApp } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { TARGETS } from '../src/functions/runtime/index.js';
import { signedInBrowser } from './helpers/dashboard.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const DELIVERY = 'cart.delivery-options.transform.run';
const PAYMENT = 'cart.payment-methods.transform.run';
const fn = (handle: string, target = DELIVERY, extra: Record<string, unknown> = {}) => ({ handle, target, expression: '{"operations": []}', ...extra });
const patch = (app: TestApp, body: unknown) => h.req('PATCH', `/apps/developer/apps/${app.appId}`, { token: app.developerToken, body });
const read = async (app: TestApp) => (await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: app.developerToken })).json().data.app;
const storeFunctions = async (merchant: Merchant, app: TestApp) =>
  ((await h.req('GET', '/functions', { token: merchant.token })).json().data.functions as any[]).filter((f) => f.appId === app.appId);

const MANIFEST = {
  webhooks: [{ topic: 'orders/create', uri: 'https://hooks.example.com/orders' }, { topic: 'products/update', uri: 'https://hooks.example.com/products' }],
  salesChannel: true,
  shipping: { ratesUrl: 'https://rates.example.com/quote' },
  functions: [fn('hide'), fn('rename', PAYMENT, { title: 'Rename', configuration: { to: 'Card' } })],
};
/** The functions as the app shows them: title null and configuration {} when not given. */
const SHOWN_FUNCTIONS = [
  { handle: 'hide', target: DELIVERY, title: null, expression: '{"operations": []}', configuration: {} },
  { handle: 'rename', target: PAYMENT, title: 'Rename', expression: '{"operations": []}', configuration: { to: 'Card' } },
];

/** An app with every extension, installed on a store whose merchant switched `rename` off. */
async function installedFullApp(partner?: { token: string }) {
  partner ??= await signupPartner(h);
  const app = await createTestApp(h, partner.token, { extensions: MANIFEST });
  const merchant = await signupMerchant(h);
  await installApp(h, merchant, app);
  const before = await storeFunctions(merchant, app);
  const rename = before.find((f) => f.handle === 'rename');
  const off = await h.req('PATCH', `/functions/${rename.functionId}`, { token: merchant.token, body: { active: false, configuration: { to: 'Merchant card' } } });
  expect(off.statusCode, off.body).toBe(200);
  return { app, merchant, functions: await storeFunctions(merchant, app) };
}

describe('C3.2 PATCH merges extensions by key', () => {
  it('C3.2 C15.3 a PATCH of shipping keeps the webhooks, the sales channel and the functions, with their activations on every store', async () => {
    const { app, merchant, functions } = await installedFullApp();
    const res = await patch(app, { extensions: { shipping: { ratesUrl: 'https://rates2.example.com/quote' } } });
    expect(res.statusCode, res.body).toBe(200);
    const expected = { ...MANIFEST, shipping: { ratesUrl: 'https://rates2.example.com/quote' }, functions: SHOWN_FUNCTIONS };
    expect(res.json().data.app.extensions).toEqual(expected);
    expect((await read(app)).extensions).toEqual(expected);
    // C11.1: not re-synced: same ids, the merchant's switch and configuration kept.
    expect(await storeFunctions(merchant, app)).toEqual(functions);
  });

  it('C3.2 an empty extensions object, or a PATCH without extensions, changes no extension', async () => {
    const { app, merchant, functions } = await installedFullApp();
    for (const body of [{ extensions: {} }, { name: 'Renamed' }]) {
      const res = await patch(app, body);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.app.extensions).toEqual({ ...MANIFEST, functions: SHOWN_FUNCTIONS });
    }
    expect(await storeFunctions(merchant, app)).toEqual(functions);
  });

  it('C3.2 a key given replaces that key whole: arrays are not merged item by item', async () => {
    const { app } = await installedFullApp();
    const webhooks = [{ topic: 'customers/create', uri: 'https://hooks.example.com/customers' }];
    const res = await patch(app, { extensions: { webhooks, salesChannel: false } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.app.extensions).toEqual({ ...MANIFEST, webhooks, salesChannel: false, functions: SHOWN_FUNCTIONS });
  });

  it('C3.2 a key given as null removes that extension and only that one', async () => {
    const { app } = await installedFullApp();
    let expected: Record<string, unknown> = { ...MANIFEST, functions: SHOWN_FUNCTIONS };
    for (const key of ['webhooks', 'salesChannel', 'shipping'] as const) {
      const res = await patch(app, { extensions: { [key]: null } });
      expect(res.statusCode, res.body).toBe(200);
      const { [key]: _removed, ...rest } = expected;
      expected = rest;
      expect(res.json().data.app.extensions).toEqual(expected);
    }
    expect((await read(app)).extensions).toEqual({ functions: SHOWN_FUNCTIONS });
  });

  it('C11.1 functions are re-synced only when named: a new list changes every store, null removes them all', async () => {
    const { app, merchant, functions } = await installedFullApp();
    const merchant2 = await signupMerchant(h);
    await installApp(h, merchant2, app);

    const replaced = await patch(app, { extensions: { functions: [fn('rename', PAYMENT, { title: 'Renamed' }), fn('validate', 'cart.validations.generate.run')] } });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json().data.app.extensions).toMatchObject({ webhooks: MANIFEST.webhooks, salesChannel: true, shipping: MANIFEST.shipping });
    const after = await storeFunctions(merchant, app);
    // `validate` is new (activated); `rename` is updated in place: still switched off by the merchant.
    expect(after.map((f) => [f.handle, f.title, f.active])).toEqual([['validate', null, true], ['rename', 'Renamed', false]]);
    // `rename` kept its id (by handle), `hide` is gone.
    expect(after.find((f) => f.handle === 'rename').functionId).toBe(functions.find((f) => f.handle === 'rename').functionId);
    expect((await storeFunctions(merchant2, app)).map((f) => f.handle).sort()).toEqual(['rename', 'validate']);

    const removed = await patch(app, { extensions: { functions: null } });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json().data.app.extensions).toEqual({ webhooks: MANIFEST.webhooks, salesChannel: true, shipping: MANIFEST.shipping });
    expect(await storeFunctions(merchant, app)).toEqual([]);
    expect(await storeFunctions(merchant2, app)).toEqual([]);
  });

  it('C3.1 create is unchanged: the keys given are stored, a key given as null is left out', async () => {
    const partner = await signupPartner(h);
    const app = await createTestApp(h, partner.token, { extensions: { webhooks: null, salesChannel: null, shipping: null, functions: null } });
    expect((await read(app)).extensions).toEqual({});
    const full = await createTestApp(h, partner.token, { extensions: MANIFEST });
    expect((await read(full)).extensions).toEqual({ ...MANIFEST, functions: SHOWN_FUNCTIONS });
  });

  it('C3.2 a bad key refuses the whole PATCH: nothing changes', async () => {
    const { app, merchant, functions } = await installedFullApp();
    expectEnvelopeError(await patch(app, { extensions: { shipping: { ratesUrl: 'https://ok.example.com/r' }, functions: [fn('x', 'nope')] } }), 400, /^extensions\.functions\[0\] \(x\): target/);
    expect((await read(app)).extensions).toEqual({ ...MANIFEST, functions: SHOWN_FUNCTIONS });
    expect(await storeFunctions(merchant, app)).toEqual(functions);
  });
});

describe('dashboard: the app edit form under the merge rule', () => {
  it('C3.2 the form names every extension: a filled field replaces it, a cleared one removes it (null)', async () => {
    const partner = await signupPartner(h);
    const { app, merchant, functions } = await installedFullApp(partner);
    const browser = await signedInBrowser(h, partner.email);
    const edit = `/dashboard/apps/${app.appId}/edit`;
    const form = { name: 'Edited', handle: app.handle, appUrl: 'https://app.example.com', scopes: ['read_products'], pricingType: 'free' };
    const filled = {
      ...form,
      webhooks: MANIFEST.webhooks.map((w) => `${w.topic} ${w.uri}`).join('\n'),
      salesChannel: 'on',
      ratesUrl: 'https://rates2.example.com/quote',
      functions: JSON.stringify(SHOWN_FUNCTIONS),
    };
    const saved = await browser.submit(edit, `/dashboard/apps/${app.appId}`, filled);
    expect(saved.status, saved.html).toBe(303);
    expect((await read(app)).extensions).toEqual({ ...MANIFEST, shipping: { ratesUrl: 'https://rates2.example.com/quote' }, functions: SHOWN_FUNCTIONS });
    // The same functions again: kept by handle, with the merchant's switch and configuration.
    expect(await storeFunctions(merchant, app)).toEqual(functions);

    const cleared = await browser.submit(edit, `/dashboard/apps/${app.appId}`, { ...form, webhooks: '', ratesUrl: '', functions: '' });
    expect(cleared.status, cleared.html).toBe(303);
    expect((await read(app)).extensions).toEqual({});
    expect(await storeFunctions(merchant, app)).toEqual([]);
  });
});

// ---- bounds --------------------------------------------------------------------------------

const url = (length: number, host = 'bound.example.com') => {
  const base = `https://${host}/`;
  return base + 'a'.repeat(length - base.length);
};
const distinctUrls = (n: number) => Array.from({ length: n }, (_, i) => `https://hooks.example.com/${i}`);
const webhooks = (n: number) => distinctUrls(n).map((uri) => ({ topic: 'orders/create', uri }));
const fns = (n: number) => Array.from({ length: n }, (_, i) => fn(`f${i}`, TARGETS[i % TARGETS.length]));
/** A handle of exactly n characters, unique to this run. */
const handleOf = (n: number) => `h${unique()}`.padEnd(n, 'x');
/** A JSON object whose JSON text is exactly n bytes: {"k":"..."} */
const configurationOf = (n: number) => ({ k: 'x'.repeat(n - 8) });
const expressionOf = (n: number) => '{"operations": []}'.padEnd(n, ' ');

interface Bound {
  field: string;
  /** The body (create: merged into a valid one) with the value of this many characters, bytes or items. */
  body: (n: number) => Record<string, unknown>;
  max: number;
  /** What the 400's message says: it names the field. */
  refused: RegExp;
  /** Where the value shows in the app, to check it is stored as sent. */
  shown?: (app: any) => unknown;
  value?: (n: number) => unknown;
}

const BOUNDS: Bound[] = [
  { field: 'name', max: 255, body: (n) => ({ name: `N${unique()}`.padEnd(n, 'N') }), refused: /^name must be at most 255 characters$/, shown: (a) => a.name.length, value: (n) => n },
  { field: 'handle', max: 60, body: (n) => ({ handle: handleOf(n) }), refused: /^handle must be at most 60 characters$/, shown: (a) => a.handle.length, value: (n) => n },
  { field: 'version', max: 128, body: (n) => ({ version: '1.0.0+'.padEnd(n, 'b') }), refused: /^version must be at most 128 characters$/, shown: (a) => a.version, value: (n) => '1.0.0+'.padEnd(n, 'b') },
  { field: 'appUrl', max: 2048, body: (n) => ({ appUrl: url(n) }), refused: /^appUrl must be at most 2048 characters$/, shown: (a) => a.appUrl, value: (n) => url(n) },
  { field: 'redirectUrls[0]', max: 2048, body: (n) => ({ redirectUrls: [url(n)] }), refused: /^redirectUrls\[0\] must be at most 2048 characters$/, shown: (a) => a.redirectUrls, value: (n) => [url(n)] },
  { field: 'redirectUrls (count)', max: 50, body: (n) => ({ redirectUrls: distinctUrls(n) }), refused: /^redirectUrls must have at most 50 URLs$/, shown: (a) => a.redirectUrls.length, value: (n) => n },
  {
    field: 'gdprUrls.shopRedact', max: 2048, body: (n) => ({ gdprUrls: { shopRedact: url(n) } }), refused: /^gdprUrls\.shopRedact must be at most 2048 characters$/,
    shown: (a) => a.gdprUrls.shopRedact, value: (n) => url(n),
  },
  {
    field: 'extensions.webhooks[0].uri', max: 2048, body: (n) => ({ extensions: { webhooks: [{ topic: 'orders/create', uri: url(n) }] } }),
    refused: /^extensions\.webhooks\[0\]\.uri must be at most 2048 characters$/, shown: (a) => a.extensions.webhooks[0].uri, value: (n) => url(n),
  },
  {
    field: 'extensions.webhooks (count)', max: 100, body: (n) => ({ extensions: { webhooks: webhooks(n) } }),
    refused: /^extensions\.webhooks must have at most 100 webhooks$/, shown: (a) => a.extensions.webhooks.length, value: (n) => n,
  },
  {
    field: 'extensions.shipping.ratesUrl', max: 2048, body: (n) => ({ extensions: { shipping: { ratesUrl: url(n) } } }),
    refused: /^extensions\.shipping\.ratesUrl must be at most 2048 characters$/, shown: (a) => a.extensions.shipping.ratesUrl, value: (n) => url(n),
  },
  {
    field: 'extensions.functions (count)', max: 100, body: (n) => ({ extensions: { functions: fns(n) } }),
    refused: /^extensions\.functions must have at most 100 functions$/, shown: (a) => a.extensions.functions.length, value: (n) => n,
  },
  {
    field: 'extensions.functions[0].handle', max: 60, body: (n) => ({ extensions: { functions: [fn('f'.repeat(n))] } }),
    refused: /^extensions\.functions\[0\]\.handle must be at most 60 characters$/, shown: (a) => a.extensions.functions[0].handle, value: (n) => 'f'.repeat(n),
  },
  {
    // Counted in characters (code points), as the app's name is: an astral character is one.
    field: 'extensions.functions[0].title', max: 255, body: (n) => ({ extensions: { functions: [fn('t', DELIVERY, { title: '🚚'.repeat(n) })] } }),
    refused: /^extensions\.functions\[0\] \(t\): title must be at most 255 characters$/, shown: (a) => a.extensions.functions[0].title, value: (n) => '🚚'.repeat(n),
  },
  {
    field: 'extensions.functions[0].expression', max: 10_000, body: (n) => ({ extensions: { functions: [fn('e', DELIVERY, { expression: expressionOf(n) })] } }),
    refused: /^extensions\.functions\[0\] \(e\): expression is too long \(10001 characters; the maximum is 10000\)$/,
    shown: (a) => a.extensions.functions[0].expression, value: (n) => expressionOf(n),
  },
  {
    field: 'extensions.functions[0].configuration', max: 10 * 1024, body: (n) => ({ extensions: { functions: [fn('c', DELIVERY, { configuration: configurationOf(n) })] } }),
    refused: /^extensions\.functions\[0\] \(c\): configuration is too large \(10241 bytes; the maximum is 10240\)$/,
    shown: (a) => a.extensions.functions[0].configuration, value: (n) => configurationOf(n),
  },
  {
    field: 'pricing.trialDays', max: 365, body: (n) => ({ pricing: { type: 'recurring', amount: '9.99', currency: 'USD', interval: 'month', trialDays: n } }),
    refused: /^pricing\.trialDays must be a whole number of days$/, shown: (a) => a.pricing.trialDays, value: (n) => n,
  },
];

describe('C3.1 C3.2 C11.1 every text and list of the manifest has a bound', () => {
  const base = () => ({ name: `Bound ${unique()}`, appUrl: 'https://app.example.com', scopes: ['read_products'] });

  it.each(BOUNDS.map((b) => [b.field, b] as const))('%s: at the bound 201 on create and 200 on PATCH; one past it 400 naming the field on both', async (_field, bound) => {
    const partner = await signupPartner(h);
    const atBound = await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { ...base(), ...bound.body(bound.max) } });
    expect(atBound.statusCode, atBound.body).toBe(201);
    if (bound.shown) expect(bound.shown(atBound.json().data.app)).toEqual(bound.value!(bound.max));
    expectEnvelopeError(await h.req('POST', '/apps/developer/apps', { token: partner.token, body: { ...base(), ...bound.body(bound.max + 1) } }), 400, bound.refused);

    const app = await createTestApp(h, partner.token);
    const patched = await patch(app, bound.body(bound.max));
    expect(patched.statusCode, patched.body).toBe(200);
    if (bound.shown) expect(bound.shown(patched.json().data.app)).toEqual(bound.value!(bound.max));
    const before = await read(app);
    expectEnvelopeError(await patch(app, bound.body(bound.max + 1)), 400, bound.refused);
    expect(await read(app)).toEqual(before);
  });
});
