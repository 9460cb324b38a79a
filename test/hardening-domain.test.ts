// Issue 10, the defects of the business rules: a JWT without `exp` (6), the test clock that could
// brick a data dir (4), currencies and their minor units (15), the storefront order key (17), and
// three departures from the documents (18: C6.4 topic scopes, the point-of-sale refund's events,
// tracking fields stored verbatim).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { createHarness, TEST_SECRET, type Harness } from './helpers/harness.js';
import { operatorToken, signupMerchant, storeWithApp } from './helpers/actors.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { eventsOf } from './helpers/events.js';
import { insertProduct, orderBody, orderStore, takeOrder, uniq } from './helpers/orders.js';
import { MAX_CLOCK_OFFSET_MS, loadClockOffset } from '../src/platform/clock-store.js';
import { TestClock } from '../src/clock.js';
import { isoCurrency, hundredthsStep } from '../src/currencies.js';
import { data as isoCurrencies } from 'currency-codes';
import { computeTotals } from '../src/orders/pricing.js';
import { lineItemView } from '../src/orders/order-view.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

describe('platform JWTs must carry exp (C2.3)', () => {
  const key = new TextEncoder().encode(TEST_SECRET);
  const sign = (claims: { exp?: number; iat?: number; sub?: string }, role = 'MERCHANT', storeId?: string) => {
    let jwt = new SignJWT({ role, ...(storeId ? { storeId } : {}) }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer(h.config.siteUrl);
    if (claims.sub) jwt = jwt.setSubject(claims.sub);
    if (claims.iat !== undefined) jwt = jwt.setIssuedAt(claims.iat);
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
    return jwt.sign(key);
  };

  it('a token signed with the key but without exp is refused (401); the same token with exp is accepted', async () => {
    const m = await signupMerchant(h);
    const now = Math.floor(h.clock.nowMs() / 1000);
    const withExp = await sign({ sub: m.userId, iat: now, exp: now + 3600 }, 'MERCHANT', m.storeId);
    expect((await h.req('GET', '/notifications', { token: withExp })).statusCode).toBe(200);
    const noExp = await sign({ sub: m.userId, iat: now }, 'MERCHANT', m.storeId);
    expectEnvelopeError(await h.req('GET', '/notifications', { token: noExp }), 401);
    expectEnvelopeError(await h.req('GET', '/apps/developer/apps', { token: noExp }), 401);
    const noIat = await sign({ sub: m.userId, exp: now + 3600 }, 'MERCHANT', m.storeId);
    expectEnvelopeError(await h.req('GET', '/notifications', { token: noIat }), 401);
  });
});

describe('the test clock cannot be carried into invalid dates (C12.1)', () => {
  it('an advance past the bound is a 400 and nothing is saved; the service keeps working and restarts', async () => {
    const ops = await operatorToken(h);
    const before = (await h.req('GET', '/apps/admin/clock', { token: ops })).json().data.now;
    for (const seconds of [9007199254740992, 1e300, MAX_CLOCK_OFFSET_MS / 1000 + 1]) {
      expectEnvelopeError(await h.req('POST', '/apps/admin/clock/advance', { token: ops, body: { seconds } }), 400, 'seconds');
    }
    const after = (await h.req('GET', '/apps/admin/clock', { token: ops })).json().data.now;
    expect(Date.parse(after) - Date.parse(before)).toBeLessThan(60_000);
    // Writes still work, and a process starting on this database reads a valid offset.
    expect((await signupMerchant(h)).token).toEqual(expect.any(String));
    const restarted = new TestClock(h.clock.storageKey);
    await loadClockOffset(h.db, restarted);
    expect(Number.isNaN(restarted.now().getTime())).toBe(false);
  });

  it('a large advance within the bound works, and one that would cross it is refused', async () => {
    const ops = await operatorToken(h);
    const clock = new TestClock(`test_clock_bound_${Date.now()}`);
    const { advanceClock } = await import('../src/platform/clock-store.js');
    await advanceClock(h.db, clock, MAX_CLOCK_OFFSET_MS / 1000 - 10);
    await expect(advanceClock(h.db, clock, 11)).rejects.toThrow(/cannot run more than/);
    expect(clock.offset).toBe(MAX_CLOCK_OFFSET_MS - 10_000);
    expect(Number.isNaN(clock.now().getTime())).toBe(false);
    expect(ops).toEqual(expect.any(String));
  });

  it('an out-of-range offset left by an older build is ignored at start instead of bricking the process', async () => {
    const key = `test_clock_bricked_${Date.now()}`;
    await h.db.query('INSERT INTO platform_settings (key, value) VALUES ($1, to_jsonb($2::bigint))', [key, '9007199254740992000']);
    const clock = new TestClock(key);
    await loadClockOffset(h.db, clock);
    expect(clock.offset).toBe(0);
  });
});

describe('ISO 4217 currencies and their minor units', () => {
  it('knows real codes only', () => {
    expect(['usd', 'JPY', ' eur ', 'BHD', 'XAF'].map(isoCurrency)).toEqual(['USD', 'JPY', 'EUR', 'BHD', 'XAF']);
    expect(['XYZ', 'XXX', 'XTS', 'XAU', 'US', 'USDX', '', 3, null].map(isoCurrency)).toEqual(Array(9).fill(null));
    expect(['USD', 'JPY', 'BHD', 'KRW', 'CLF'].map(hundredthsStep)).toEqual([1, 100, 1, 100, 1]);
  });

  it('a code spelled with a letter that only Unicode case mapping makes ASCII is no currency, for every code and every such letter', () => {
    // Every BMP character that is not ASCII but upper-cases to ASCII letters (ſ -> S, ı -> I, ﬀ -> FF, ...).
    const lookalikes: string[] = [];
    for (let c = 0x80; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      if (/^[A-Z]+$/.test(ch.toUpperCase())) lookalikes.push(ch);
    }
    expect(lookalikes).toEqual(expect.arrayContaining(['ſ', 'ı']));
    const accepted: string[] = [];
    for (const code of isoCurrencies.map((c) => c.code).filter((c) => isoCurrency(c) !== null)) {
      for (const ch of lookalikes) {
        const upper = ch.toUpperCase();
        // Put the lookalike where its upper case spells the same letters as the code, in lower case around it.
        for (let i = code.indexOf(upper); i >= 0; i = code.indexOf(upper, i + 1)) {
          const spelled = code.slice(0, i).toLowerCase() + ch + code.slice(i + upper.length).toLowerCase();
          expect(spelled.toUpperCase()).toBe(code);
          if (isoCurrency(spelled) !== null) accepted.push(spelled);
        }
      }
    }
    expect(accepted).toEqual([]);
  });

  it('an order in an unknown currency is a 400 naming currency', async () => {
    const s = await orderStore(h);
    const res = await h.req('POST', '/orders', { token: s.merchant.token, body: orderBody(null, { currency: 'XYZ', line_items: [{ title: 'Gift', price: '10.00', quantity: 1 }] }) });
    expectEnvelopeError(res, 400, 'currency');
  });

  it('a JPY order refuses fractions of a yen and takes whole yen; tax and percentage discounts round to whole yen', async () => {
    const s = await orderStore(h);
    const custom = (price: string, extra: Record<string, unknown> = {}) =>
      orderBody(null, { currency: 'JPY', line_items: [{ title: 'Tea set', price, quantity: 1 }], ...extra });
    expectEnvelopeError(await h.req('POST', '/orders', { token: s.merchant.token, body: custom('1000.50') }), 400, 'line_items[0].price');
    expectEnvelopeError(await h.req('POST', '/orders', { token: s.merchant.token, body: custom('1000', { shipping_line: { title: 'Std', price: '500.5' } }) }), 400, 'shipping_line.price');
    const order = await takeOrder(h, s.merchant.token, custom('1005', { tax_rate: '0.1', shipping_line: { title: 'Std', price: '500' } }));
    const view = (await h.req('GET', `/api/v1/orders/${order.orderId}.json`, { token: s.accessToken })).json().order;
    // 10 % of 1005 yen is 100.5 yen: whole yen, half up.
    expect(view).toMatchObject({ currency: 'JPY', subtotal_price: '1005.00', tax_price: '101.00', shipping_price: '500.00', total_price: '1606.00' });
    // A USD order keeps its cents.
    const usd = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ title: 'Tea', price: '10.05', quantity: 1 }], tax_rate: '0.1' }));
    const usdView = (await h.req('GET', `/api/v1/orders/${usd.orderId}.json`, { token: s.accessToken })).json().order;
    expect(usdView).toMatchObject({ currency: 'USD', tax_price: '1.01', total_price: '11.06' });
  });

  it("a catalog product's price is held to the order's currency too: 12.50 is no yen amount; whole catalog prices are taken", async () => {
    // Catalog prices are in the store's currency and are not converted (docs/decisions.md); before,
    // only amounts the body brought were checked, and a 12.50 product made an order of 13.50 yen.
    const s = await orderStore(h);
    const cents = await insertProduct(h, s.merchant.storeId, { price: 1250, stock: 5 });
    const whole = await insertProduct(h, s.merchant.storeId, { price: 1200, stock: 5 });
    const inYen = (productId: string) => orderBody(null, { currency: 'JPY', line_items: [{ product_id: productId, quantity: 1 }] });
    const refused = await h.req('POST', '/orders', { token: s.merchant.token, body: inYen(cents.id) });
    expectEnvelopeError(refused, 400, 'line_items[0].price');
    expect(refused.json().message).toContain('catalog price 12.50');
    // Nothing was taken: no order exists.
    expect((await h.db.query('SELECT count(*)::int AS n FROM orders WHERE store_id = $1', [s.merchant.storeId])).rows[0].n).toBe(0);
    const order = await takeOrder(h, s.merchant.token, inYen(whole.id));
    const view = (await h.req('GET', `/api/v1/orders/${order.orderId}.json`, { token: s.accessToken })).json().order;
    expect(view).toMatchObject({ currency: 'JPY', subtotal_price: '12.00' });
    // The replacement products of an order update are held to the order's currency the same way.
    const replaced = await h.req('PUT', `/orders/update/${order.orderId}`, { token: s.merchant.token, body: { products: [{ product_id: cents.id, quantity: 1 }] } });
    expectEnvelopeError(replaced, 400, 'products[0].price');
  });

  it("a line's final_price is a whole yen: 10 % off 7 units of 67 yen shows 60 a unit, not 60.29 (its final_line_price, 422, is the exact figure)", async () => {
    const s = await orderStore(h);
    const code = `YEN${uniq().toUpperCase()}`;
    expect((await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, type: 'Percentage', discountPercentage: 10 } })).statusCode).toBe(201);
    const order = await takeOrder(h, s.merchant.token, orderBody(null, { currency: 'JPY', line_items: [{ title: 'Tea', price: '67', quantity: 7 }], discount_code: code }));
    const line = (await h.req('GET', `/api/v1/orders/${order.orderId}.json`, { token: s.accessToken })).json().order.line_items[0];
    // 469 yen less 10 % (46.9, whole yen half up: 47) is 422; 422 / 7 = 60.29 a unit, shown in whole yen.
    expect(line).toMatchObject({ price: '67.00', line_price: '469.00', total_discount: '47.00', final_line_price: '422.00', final_price: '60.00' });
  });

  it("every amount of a line's view is a whole number of its currency's steps, over random lines (USD, JPY, BHD, KRW)", () => {
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    for (const currency of ['USD', 'JPY', 'BHD', 'KRW']) {
      const step = hundredthsStep(currency);
      for (let i = 0; i < 2_000; i++) {
        const quantity = 1 + next(50);
        const priceMinor = (1 + next(100_000)) * step;
        const discountMinor = next(priceMinor * quantity / step + 1) * step;
        const view = lineItemView({ id: 'l', product_id: null, variant_id: null, product_num_id: null, variant_num_id: null, title: 't', variant_title: null, sku: null, quantity, price_minor: priceMinor, total_discount_minor: discountMinor, properties: [], requires_shipping: true, taxable: true, stock_deducted: false, fulfilled_quantity: 0, position: 0 }, step);
        for (const key of ['price', 'line_price', 'final_price', 'final_line_price', 'total_discount'] as const) {
          const hundredths = Math.round(Number(view[key]) * 100);
          if (hundredths % step !== 0) throw new Error(`${currency} ${key} ${view[key]} (quantity ${quantity}, price ${priceMinor}, discount ${discountMinor})`);
        }
      }
    }
  });

  it('discounts are shared out in whole steps of the currency, and still add up exactly', () => {
    const lines = [1, 2, 3].map((q) => ({ productId: null, unitMinor: 33_300, quantity: q, taxable: true }));
    const t = computeTotals(lines, 0, { code: 'X', type: 'Percentage', percentBp: 1_234, amountMinor: null, applyOn: [] }, 80_000, 100);
    for (const l of t.lines) expect(l.discountMinor % 100).toBe(0);
    expect(t.taxMinor % 100).toBe(0);
    expect(t.lineDiscountMinor).toBe(t.lines.reduce((s, l) => s + l.discountMinor, 0));
    expect(t.totalMinor).toBe(t.itemsMinor - t.lineDiscountMinor + t.taxMinor);
  });

  it('app pricing takes ISO codes and amounts the currency can hold', async () => {
    const s = await storeWithApp(h);
    const create = (pricing: unknown) => h.req('POST', '/apps/developer/apps', {
      token: s.partner.token, body: { name: `Priced ${Date.now()}`, appUrl: 'https://app.example.com', scopes: ['read_products'], pricing },
    });
    expectEnvelopeError(await create({ type: 'recurring', amount: '9.99', currency: 'XYZ', interval: 'month' }), 400, 'pricing.currency');
    expectEnvelopeError(await create({ type: 'recurring', amount: '999.50', currency: 'JPY', interval: 'month' }), 400, 'pricing.amount');
    const ok = await create({ type: 'recurring', amount: '1000', currency: 'jpy', interval: 'month' });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().data.app.pricing).toMatchObject({ amount: '1000.00', currency: 'JPY' });
  });
});

describe('the storefront order key', () => {
  it('the right key shows the status; a wrong key of any length, or none, is the same 404', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
    const order = await takeOrder(h, s.merchant.token, orderBody(p));
    const { rows } = await h.db.query<{ confirmation_number: string; slug: string }>(
      'SELECT o.confirmation_number, s.slug FROM orders o JOIN stores s ON s.id = o.store_id WHERE o.id = $1', [order.orderId]);
    const { confirmation_number: key, slug } = rows[0];
    const url = (k?: string) => `/storefront/${slug}/orders/${order.orderId}${k === undefined ? '' : `?key=${encodeURIComponent(k)}`}`;
    expect((await h.req('GET', url(key))).statusCode).toBe(200);
    const wrongSameLength = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    for (const k of [undefined, '', wrongSameLength, key + 'x', key.slice(1), 'é'.repeat(key.length)]) {
      expectEnvelopeError(await h.req('GET', url(k)), 404, 'Order not found');
    }
  });
});

describe('departures from the documents (issue 10, 18)', () => {
  it('C6.4: read_inventory alone opens the product topics as well as inventory levels', async () => {
    const s = await storeWithApp(h, { scopes: ['read_inventory', 'read_shop'] });
    for (const topic of ['products/create', 'products/update', 'products/delete', 'inventory_levels/update']) {
      const res = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic, address: 'https://hooks.example.com/x' } } });
      expect(res.statusCode, `${topic}: ${res.body}`).toBe(201);
    }
    const orders = await h.req('POST', '/api/v1/webhooks.json', { token: s.accessToken, body: { webhook: { topic: 'orders/create', address: 'https://hooks.example.com/x' } } });
    expect(orders.statusCode).toBe(403);
  });

  it('a point-of-sale refund emits refunds/create and nothing else', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
    const order = await takeOrder(h, s.merchant.token, orderBody(p));
    const evs = await eventsOf(h, s.merchant.storeId, async () => {
      const res = await h.req('POST', `/orders/${order.orderId}/refund`, { token: s.merchant.token, body: { pos: true } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ financialStatus: 'refunded' });
    });
    expect(evs.map((e) => e.topic)).toEqual(['refunds/create']);
  });

  it('tracking fields are stored exactly as sent, surrounding spaces included', async () => {
    const s = await orderStore(h);
    const p = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
    const order = await takeOrder(h, s.merchant.token, orderBody(p));
    const res = await h.req('POST', `/api/v1/orders/${order.orderId}/fulfillments.json`, {
      token: s.accessToken, body: { fulfillment: { tracking_company: '  Bob\'s  Couriers ', tracking_number: ' TRK 1 ' } },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.fulfillment).toMatchObject({ trackingCompany: '  Bob\'s  Couriers ', trackingNumber: ' TRK 1 ' });
    const id = res.json().data.fulfillment.fulfillmentId;
    const upd = await h.req('PUT', `/api/v1/fulfillments/${id}.json`, { token: s.accessToken, body: { fulfillment: { tracking_company: ' DHL ' } } });
    expect(upd.json().data.fulfillment.trackingCompany).toBe(' DHL ');
    const merchant = await h.req('PUT', `/orders/update/${order.orderId}`, { token: s.merchant.token, body: { courierName: ' UPS ', trackingNumber: ' 1Z 9 ' } });
    expect(merchant.json().data).toMatchObject({ courierName: ' UPS ', trackingNumber: ' 1Z 9 ' });
  });
});
