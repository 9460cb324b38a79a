// Review (rv2) of the buyer checkout (C15.1): a completed checkout is the record of the order it
// made, so what it shows stays what its completion charged (failed before its fix: it was priced
// again from the catalog and its discount code checked again on every read).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { storeWithApp } from './helpers/actors.js';
import { address, insertProduct, uniq } from './helpers/orders.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const { create, read, change, complete } = checkoutCalls(() => h);
const FIGURES = ['subtotal_price', 'total_discounts', 'shipping_price', 'tax_price', 'total_price'] as const;
const figures = (o: Record<string, unknown>) => Object.fromEntries(FIGURES.map((k) => [k, o[k]]));

describe('a completed checkout shows what its completion charged (C15.1)', () => {
  it("its lines, discounts and totals stay the order's after its code is used up by that order, a price moves and the product is archived", async () => {
    const s = await storeWithApp(h, { scopes: ['read_orders', 'write_orders'], tier: 'enterprise' });
    const product = await insertProduct(h, s.merchant.storeId, { title: 'Mug', price: 2000, stock: 10 });
    // One use in all: the checkout's own order takes it.
    await h.db.query(
      `INSERT INTO discounts (id, store_id, code, type, discount_percentage, status, total_coupons, start_date, created_at, updated_at)
       VALUES ($1, $2, 'ONCE', 'Percentage', 10, 'Active', 1, now() - interval '1 day', now(), now())`,
      [uuidv7(), s.merchant.storeId],
    );
    const zone = await insertSimpleZone(h, s.merchant.storeId, { name: 'Standard', countries: ['GB'], price: 700 });
    const made = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 2 }], shipping_address: address, discount_code: 'ONCE' });
    expect(made.statusCode, made.body).toBe(201);
    const token = made.json().data.checkout.token as string;
    const ready = await change(s, token, { shipping_rate: { handle: `zone-${zone}` }, payment_method: 'card' });
    expect(ready.statusCode, ready.body).toBe(200);
    const before = ready.json().data.checkout;
    expect(figures(before)).toEqual({ subtotal_price: '36.00', total_discounts: '4.00', shipping_price: '7.00', tax_price: '0.00', total_price: '43.00' });

    const done = await complete(s, token);
    expect(done.statusCode, done.body).toBe(201);
    const order = done.json().data.order;
    expect(figures(order)).toEqual(figures(before));

    const shown = async () => {
      const res = await read(s, token);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data.checkout;
    };
    const expected = {
      order_id: order.id,
      completed_at: expect.any(String),
      validation_errors: [],
      discount_applications: before.discount_applications,
      line_items: before.line_items,
      shipping_line: before.shipping_line,
      ...figures(order),
    };
    // The code's one use is the order's own: the checkout still shows it applied.
    expect(await shown()).toMatchObject(expected);
    await h.db.query('UPDATE products SET price_minor = 5000 WHERE id = $1', [product.id]);
    expect(await shown()).toMatchObject(expected);
    await h.db.query(`UPDATE products SET status = 'archived' WHERE id = $1`, [product.id]);
    expect(await shown()).toMatchObject(expected);
  });
});
