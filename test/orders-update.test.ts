// Merchant order updates (app-api.md `PUT /orders/update/{orderId}`, `PATCH /orders/update-signle-order/{orderId}`;
// Order status table; C7.1 record and access; C7.2 cash/offline payment and restock once per line
// item). Events: orders/updated on every change, orders/paid and orders/cancelled when they apply.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { operatorToken, staffToken } from './helpers/actors.js';
import { uuidv7 } from '../src/ids.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { eventsOf } from './helpers/events.js';
import { insertProduct, orderBody, orderStore, stockOf, takeOrder, uniq, variantStock } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const put = (token: string, id: string, body: unknown) => h.req('PUT', `/orders/update/${id}`, { token, body });
const patch = (token: string, id: string, body: unknown) => h.req('PATCH', `/orders/update-signle-order/${id}`, { token, body });
const full = async (token: string, id: string) => (await h.req('GET', `/api/v1/orders/${id}.json`, { token })).json().order;
const setStatus = (id: string, status: string) => h.db.query('UPDATE orders SET status = $2 WHERE id = $1', [id, status]);

async function setup(opts: { paymentMethod?: string; stock?: number; quantity?: number } = {}) {
  const s = await orderStore(h);
  const p = await insertProduct(h, s.merchant.storeId, { stock: opts.stock ?? 10, price: 1500 });
  const o = await takeOrder(h, s.merchant.token, orderBody(null, {
    line_items: [{ product_id: p.id, quantity: opts.quantity ?? 2 }], paymentMethod: opts.paymentMethod ?? 'cod',
  }));
  return { s, p, o };
}

describe('every field of the update body (app-api.md merchant record)', () => {
  it('PUT and PATCH set each field; the record and the App API view show them', async () => {
    for (const send of [put, patch]) {
      const { s, o } = await setup();
      const res = await send(s.merchant.token, o.orderId, {
        courierName: 'DHL', trackingNumber: 'JD0146', digitaldata: 'licence-key-123', deliveryDate: '2030-05-01T10:00:00Z', notes: 'ring twice',
        clientName: 'Grace Hopper', email: 'Grace@Example.com', mobileNumber: '+15550199', address: '7 Navy Way', city: 'Arlington',
        state: 'VA', country: 'US', pinCode: '22201', staffId: 'staff-42', unknownKey: 'ignored',
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ status: 200, state: 'success', message: null, count: null, pagination: null });
      expect(res.json().data).toMatchObject({
        orderId: o.orderId, status: 'pending', courierName: 'DHL', trackingNumber: 'JD0146', digitaldata: 'licence-key-123',
        deliveryDate: '2030-05-01T10:00:00.000Z', notes: 'ring twice', clientName: 'Grace Hopper', email: 'grace@example.com',
        mobileNumber: '+15550199', address: '7 Navy Way', city: 'Arlington', state: 'VA', country: 'US', pinCode: '22201',
      });
      const view = await full(s.accessToken, o.orderId);
      expect(view).toMatchObject({ email: 'grace@example.com', phone: '+15550199', note: 'ring twice', tracking_number: 'JD0146' });
      expect(view.shipping_address).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', address1: '7 Navy Way', city: 'Arlington', province: 'VA', province_code: 'VA', country: 'US', country_code: 'US', zip: '22201' });
      // Fields not sent are kept.
      expect(view.shipping_address.address2).toBe('Apt 4');
    }
  });

  // Found in review: the codes stayed those of the old address (province_code OR for Ontario).
  it('a state or country sent anew takes its code along: its own when it is one, else unknown', async () => {
    const { s, o } = await setup();
    await put(s.merchant.token, o.orderId, { state: 'OR', country: 'US' });
    expect((await full(s.accessToken, o.orderId)).shipping_address).toMatchObject({ province: 'OR', province_code: 'OR', country: 'US', country_code: 'US' });
    await put(s.merchant.token, o.orderId, { state: 'Ontario', country: 'Canada' });
    expect((await full(s.accessToken, o.orderId)).shipping_address).toMatchObject({ province: 'Ontario', province_code: null, country: 'Canada', country_code: null });
    await put(s.merchant.token, o.orderId, { state: 'nsw', country: 'au' });
    expect((await full(s.accessToken, o.orderId)).shipping_address).toMatchObject({ province: 'nsw', province_code: 'NSW', country: 'au', country_code: 'AU' });
    await put(s.merchant.token, o.orderId, { city: 'Sydney' });
    expect((await full(s.accessToken, o.orderId)).shipping_address).toMatchObject({ city: 'Sydney', province_code: 'NSW', country_code: 'AU' });
  });

  it('staffId is kept for audit with the acting user', async () => {
    const { s, o } = await setup();
    await put(s.merchant.token, o.orderId, { status: 'confirmed', staffId: 'clerk-7' });
    const { rows } = await h.db.query<{ staff_id: string; user_id: string; changes: any }>(
      'SELECT staff_id, user_id, changes FROM order_changes WHERE order_id = $1', [o.orderId]);
    expect(rows).toEqual([{ staff_id: 'clerk-7', user_id: s.merchant.userId, changes: { fields: ['status', 'staffId'], status: { from: 'pending', to: 'confirmed' } } }]);
    const { rows: order } = await h.db.query<{ staff_id: string }>('SELECT staff_id FROM orders WHERE id = $1', [o.orderId]);
    expect(order[0].staff_id).toBe('clerk-7');
  });

  it('400 envelope for invalid values', async () => {
    const { s, o } = await setup();
    for (const [body, field] of [
      [{ status: 'paid' }, 'status'], [{ status: 'cancelled' }, 'status'], [{ deliveryDate: 'soon' }, 'deliveryDate'],
      [{ restock: 'yes' }, 'restock'], [{ paymentMethod: 'cheque' }, 'paymentMethod'], [{ email: 'nope' }, 'email'],
      [{ products: [] }, 'products'], [{ products: [{ quantity: 1 }] }, 'products[0].productId'], [{ courierName: {} }, 'courierName'],
    ] as [Record<string, unknown>, string][]) {
      expectEnvelopeError(await put(s.merchant.token, o.orderId, body), 400, field);
    }
  });
});

describe('status transitions (app-api.md Order status)', () => {
  it('a new status on a delivered or canceled order is rejected with 400; the same status is not new', async () => {
    for (const frozen of ['delivered', 'canceled']) {
      const { s, o } = await setup();
      await setStatus(o.orderId, frozen);
      for (const next of ['pending', 'confirmed', 'shipped', 'delivered', 'canceled', 'returned', 'exchange'].filter((x) => x !== frozen)) {
        const evs = await eventsOf(h, s.merchant.storeId, async () => expectEnvelopeError(await put(s.merchant.token, o.orderId, { status: next }), 400, frozen));
        expect(evs).toEqual([]);
      }
      const same = await put(s.merchant.token, o.orderId, { status: frozen, notes: 'still fine' });
      expect(same.statusCode).toBe(200);
      expect(same.json().data).toMatchObject({ status: frozen, notes: 'still fine' });
    }
  });

  it('from any other status each update status is accepted, with orders/updated (+ orders/cancelled)', async () => {
    const { s, p } = await setup({ stock: 1000 });
    for (const from of ['pending', 'confirmed', 'paid', 'partial', 'shipped', 'returned', 'exchange']) {
      for (const to of ['pending', 'confirmed', 'shipped', 'delivered', 'canceled', 'returned', 'exchange']) {
        const o = await takeOrder(h, s.merchant.token, orderBody(p, { paymentMethod: 'cod' }));
        await setStatus(o.orderId, from);
        let res: any;
        const evs = await eventsOf(h, s.merchant.storeId, async () => {
          res = await put(s.merchant.token, o.orderId, { status: to });
        });
        expect(res.statusCode, `${from} -> ${to}: ${res.body}`).toBe(200);
        expect(res.json().data.status).toBe(to);
        expect(evs.map((e) => e.topic), `${from} -> ${to}`).toEqual(to === 'canceled' ? ['orders/updated', 'orders/cancelled'] : ['orders/updated']);
        expect(evs[0].payload.id).toBe(o.orderId);
        if (to === 'canceled') expect(evs[0].payload).toMatchObject({ cancelled: true, cancelled_at: expect.any(String) });
      }
    }
  }, 120_000);

  it('shippedDate is set when the order first becomes shipped, and kept', async () => {
    const { s, o } = await setup();
    const first = (await put(s.merchant.token, o.orderId, { status: 'shipped' })).json().data.shippedDate;
    expect(first).toEqual(expect.any(String));
    await h.advance(60);
    await put(s.merchant.token, o.orderId, { status: 'confirmed' });
    const again = (await put(s.merchant.token, o.orderId, { status: 'shipped' })).json().data;
    expect(again.shippedDate).toBe(first);
  });

  it('every update emits orders/updated with the order after the change, even an empty one', async () => {
    const { s, o } = await setup();
    const evs = await eventsOf(h, s.merchant.storeId, () => put(s.merchant.token, o.orderId, { notes: 'n' }));
    expect(evs.map((e) => e.topic)).toEqual(['orders/updated']);
    expect(evs[0].payload).toEqual(await full(s.accessToken, o.orderId));
    const empty = await eventsOf(h, s.merchant.storeId, () => put(s.merchant.token, o.orderId, {}));
    expect(empty.map((e) => e.topic)).toEqual(['orders/updated']);
  });
});

describe('cash or offline payment method -> paid (C7.2)', () => {
  it('cod, cash, bank_transfer, offline move a pending order to paid with orders/paid and a sale', async () => {
    for (const method of ['cod', 'cash', 'bank_transfer', 'offline']) {
      const { s, o } = await setup();
      let res: any;
      const evs = await eventsOf(h, s.merchant.storeId, async () => {
        res = await put(s.merchant.token, o.orderId, { paymentMethod: method });
      });
      expect(res.json().data).toMatchObject({ status: 'paid', financialStatus: 'paid', paymentMethod: method });
      expect(evs.map((e) => e.topic)).toEqual(['orders/updated', 'orders/paid']);
      expect(evs[1].payload.financial_status).toBe('paid');
      const view = await full(s.accessToken, o.orderId);
      expect(view.transactions).toEqual([expect.objectContaining({ kind: 'sale', status: 'success', amount: '30.00', gateway: method })]);
      // Paying again changes nothing more.
      const twice = await eventsOf(h, s.merchant.storeId, () => put(s.merchant.token, o.orderId, { paymentMethod: 'cash' }));
      expect(twice.map((e) => e.topic)).toEqual(['orders/updated']);
      expect((await full(s.accessToken, o.orderId)).transactions).toHaveLength(1);
    }
  });

  it('an order of any status but delivered becomes paid (app-api.md Order status table); card only records the method', async () => {
    // Every status an unpaid order can hold but canceled (a 400, below): the table's row "order |
    // update with paymentMethod set to a cash/offline method | paid", its first row keeping a
    // delivered order as it is.
    for (const [from, to] of [['confirmed', 'paid'], ['partial', 'paid'], ['shipped', 'paid'], ['returned', 'paid'], ['exchange', 'paid'], ['delivered', 'delivered']]) {
      const a = await setup();
      await setStatus(a.o.orderId, from);
      expect((await put(a.s.merchant.token, a.o.orderId, { paymentMethod: 'cod' })).json().data, from).toMatchObject({ status: to, financialStatus: 'paid' });
    }
    const c = await setup();
    const evs = await eventsOf(h, c.s.merchant.storeId, () => put(c.s.merchant.token, c.o.orderId, { paymentMethod: 'card' }));
    expect(evs.map((e) => e.topic)).toEqual(['orders/updated']);
    expect((await full(c.s.accessToken, c.o.orderId)).financial_status).toBe('pending');
    // An explicit status in the same update wins over the move to paid.
    const d = await setup();
    expect((await put(d.s.merchant.token, d.o.orderId, { paymentMethod: 'cash', status: 'confirmed' })).json().data).toMatchObject({ status: 'confirmed', financialStatus: 'paid' });
  });

  it('a canceled order cannot be paid (400)', async () => {
    const { s, o } = await setup();
    await put(s.merchant.token, o.orderId, { status: 'canceled' });
    expectEnvelopeError(await put(s.merchant.token, o.orderId, { paymentMethod: 'cash' }), 400, 'canceled');
  });
});

describe('restock on return or cancel (C7.2): once per line item', () => {
  async function twoLines() {
    const s = await orderStore(h);
    const plain = await insertProduct(h, s.merchant.storeId, { stock: 10 });
    const tee = await insertProduct(h, s.merchant.storeId, { variants: [{ value: 'S', price: 2000, stock: 8 }] });
    const o = await takeOrder(h, s.merchant.token, orderBody(null, {
      line_items: [{ product_id: plain.id, quantity: 3 }, { product_id: tee.id, variant_id: tee.variants[0].id, quantity: 2 }, { title: 'Wrap', price: '1.00', quantity: 1 }],
    }));
    expect([await stockOf(h, plain), await variantStock(h, tee.variants[0])]).toEqual([7, 6]);
    return { s, plain, tee, o, stock: async () => [await stockOf(h, plain), await variantStock(h, tee.variants[0])] };
  }

  it('canceled with restock: stock back; the same update again gives nothing more', async () => {
    const t = await twoLines();
    expect((await put(t.s.merchant.token, t.o.orderId, { status: 'canceled', restock: true })).statusCode).toBe(200);
    expect(await t.stock()).toEqual([10, 8]);
    expect((await put(t.s.merchant.token, t.o.orderId, { status: 'canceled', restock: true })).statusCode).toBe(200);
    expect((await patch(t.s.merchant.token, t.o.orderId, { restock: true })).statusCode).toBe(200);
    expect(await t.stock()).toEqual([10, 8]);
    const { rows } = await h.db.query<{ stock_deducted: boolean }>('SELECT stock_deducted FROM order_line_items WHERE order_id = $1', [t.o.orderId]);
    expect(rows.every((r) => !r.stock_deducted)).toBe(true);
  });

  it('returned with restock, concurrently from many requests: stock back exactly once', async () => {
    const t = await twoLines();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? put : patch)(t.s.merchant.token, t.o.orderId, { status: 'returned', restock: true })));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await t.stock()).toEqual([10, 8]);
  });

  it('without restock (or with another status) the stock stays; a later restock on the canceled order returns it', async () => {
    const t = await twoLines();
    await put(t.s.merchant.token, t.o.orderId, { status: 'exchange', restock: true });
    expect(await t.stock()).toEqual([7, 6]);
    await put(t.s.merchant.token, t.o.orderId, { status: 'canceled' });
    expect(await t.stock()).toEqual([7, 6]);
    await put(t.s.merchant.token, t.o.orderId, { restock: true });
    expect(await t.stock()).toEqual([10, 8]);
  });

  it('a line item whose variant was deleted gives nothing back; the others do', async () => {
    const t = await twoLines();
    await h.db.query('DELETE FROM variants WHERE id = $1', [t.tee.variants[0].id]);
    await put(t.s.merchant.token, t.o.orderId, { status: 'canceled', restock: true });
    expect(await stockOf(h, t.plain)).toBe(10);
    expect(await stockOf(h, t.tee)).toBe(100);
  });
});

describe('replacement products', () => {
  it('give back the old stock, take the new, recompute totals with the order\'s discount and tax', async () => {
    const s = await orderStore(h);
    const a = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const b = await insertProduct(h, s.merchant.storeId, { price: 2500, stock: 10, variants: [{ value: 'L', price: 2500, stock: 4 }] });
    const code = `R${uniq()}`;
    await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, type: 'Percentage', discountPercentage: 10 } });
    const o = await takeOrder(h, s.merchant.token, orderBody(null, {
      line_items: [{ product_id: a.id, quantity: 2 }], discount_code: code, tax_rate: '0.05', paymentMethod: 'cod',
      shipping_line: { title: 'Std', code: 'std', price: '5.00' },
    }));
    expect(await stockOf(h, a)).toBe(8);
    const res = await put(s.merchant.token, o.orderId, { products: [{ productId: b.id, varientId: b.variants[0].id, quantity: 2 }, { productId: String(a.numId), quantity: 1, price: '9.00' }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.products).toEqual([
      { lineItemId: expect.any(String), productId: b.id, varientId: b.variants[0].id, title: expect.any(String), quantity: 2, price: '25.00' },
      { lineItemId: expect.any(String), productId: a.id, varientId: null, title: expect.any(String), quantity: 1, price: '9.00' },
    ]);
    expect([await stockOf(h, a), await variantStock(h, b.variants[0])]).toEqual([9, 2]);
    const view = await full(s.accessToken, o.orderId);
    // 50.00 + 9.00 = 59.00; 10 % = 5.90; subtotal 53.10; tax 5 % = 2.655 -> 2.66; shipping 5.00; total 60.76.
    expect([view.subtotal_price, view.total_discounts, view.tax_price, view.shipping_price, view.total_price, view.item_count]).toEqual(['53.10', '5.90', '2.66', '5.00', '60.76', 3]);
    expect(view.line_items.map((l: any) => l.total_discount)).toEqual(['5.00', '0.90']);
  });

  it('a paid order whose total grows is partially_paid until paid in cash', async () => {
    const s = await orderStore(h);
    const a = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
    const o = await takeOrder(h, s.merchant.token, orderBody(a, { paymentMethod: 'card' }));
    const grown = await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 3 }] });
    expect(grown.json().data).toMatchObject({ financialStatus: 'partially_paid', totalPrice: '30.00' });
    const evs = await eventsOf(h, s.merchant.storeId, () => put(s.merchant.token, o.orderId, { paymentMethod: 'cash' }));
    expect(evs.map((e) => e.topic)).toEqual(['orders/updated', 'orders/paid']);
    const view = await full(s.accessToken, o.orderId);
    expect(view.financial_status).toBe('paid');
    expect(view.transactions.map((t: any) => [t.kind, t.amount, t.gateway])).toEqual([['sale', '10.00', 'card'], ['sale', '20.00', 'cash']]);
  });

  // Found in review: a free order (total 0, paid by card) made dearer stayed `paid` with nothing
  // taken, and a full refund then gave back its new total, money never received.
  it('a free order whose total grows owes it all: pending, nothing to refund, paid once paid in cash', async () => {
    const s = await orderStore(h);
    const a = await insertProduct(h, s.merchant.storeId, { price: 2500, stock: 10 });
    const o = await takeOrder(h, s.merchant.token, orderBody(null, { line_items: [{ title: 'Sample', price: '0.00', quantity: 1 }], paymentMethod: 'card' }));
    expect((await full(s.accessToken, o.orderId))).toMatchObject({ financial_status: 'paid', total_price: '0.00' });
    const grown = await put(s.merchant.token, o.orderId, { products: [{ productId: a.id, quantity: 2 }] });
    expect(grown.statusCode, grown.body).toBe(200);
    expect(grown.json().data).toMatchObject({ financialStatus: 'pending', totalPrice: '50.00' });
    expectEnvelopeError(await h.req('POST', `/orders/${o.orderId}/refund`, { token: s.merchant.token, body: {} }), 400, 'nothing to refund');
    expect((await put(s.merchant.token, o.orderId, { paymentMethod: 'cash' })).statusCode).toBe(200);
    const view = await full(s.accessToken, o.orderId);
    expect(view.financial_status).toBe('paid');
    expect(view.transactions.map((t: any) => [t.kind, t.amount, t.gateway])).toEqual([['sale', '0.00', 'card'], ['sale', '50.00', 'cash']]);
    const refunded = await h.req('POST', `/orders/${o.orderId}/refund`, { token: s.merchant.token, body: {} });
    expect(refunded.statusCode, refunded.body).toBe(200);
    expect((await full(s.accessToken, o.orderId)).total_refunded_amount).toBe('50.00');
  });

  it('not on a canceled, refunded or fulfilled order; not beyond the stock (nothing changes then)', async () => {
    const { s, p, o } = await setup({ stock: 3, quantity: 2 });
    expectEnvelopeError(await put(s.merchant.token, o.orderId, { products: [{ productId: p.id, quantity: 4 }] }), 400, 'products[0].quantity');
    expect(await stockOf(h, p)).toBe(1);
    expect((await put(s.merchant.token, o.orderId, { products: [{ productId: p.id, quantity: 3 }] })).statusCode).toBe(200);
    expect(await stockOf(h, p)).toBe(0);
    const f = await h.req('POST', `/api/v1/orders/${o.orderId}/fulfillments.json`, { token: s.accessToken, body: { line_items: [] } });
    expect(f.statusCode).toBe(201);
    expectEnvelopeError(await put(s.merchant.token, o.orderId, { products: [{ productId: p.id, quantity: 1 }] }), 400, 'fulfillments');
    const c = await setup();
    await put(c.s.merchant.token, c.o.orderId, { status: 'canceled' });
    expectEnvelopeError(await put(c.s.merchant.token, c.o.orderId, { products: [{ productId: c.p.id, quantity: 1 }] }), 400, 'canceled');
  });
});

describe('access (C7.1)', () => {
  it('404 for an unknown or malformed id; 403 for another store\'s order; staff and the operator may', async () => {
    const { s, o } = await setup();
    const other = await orderStore(h);
    expectEnvelopeError(await put(s.merchant.token, uuidv7(), { notes: 'x' }), 404);
    expectEnvelopeError(await put(s.merchant.token, 'not-an-id', { notes: 'x' }), 404);
    expectEnvelopeError(await put(other.merchant.token, o.orderId, { notes: 'x' }), 403);
    expectEnvelopeError(await patch(other.merchant.token, o.orderId, { notes: 'x' }), 403);
    expectEnvelopeError(await put('bad-token', o.orderId, { notes: 'x' }), 401);
    for (const role of ['STAFF_ADMIN', 'MANAGER'] as const) {
      const token = await staffToken(h, s.merchant.token, role);
      expect((await put(token, o.orderId, { notes: role })).json().data.notes).toBe(role);
    }
    const ops = await operatorToken(h);
    expect((await patch(ops, o.orderId, { notes: 'ops' })).json().data.notes).toBe('ops');
  });
});
