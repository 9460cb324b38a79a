// Review (rv2) of the delivery-option functions (C11.4: they run whenever a checkout's shipping
// rates are computed, and every run is recorded, C11.5). Failed before its fix: a quote that found
// no rate ran no function, so a developer's log had no run of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { DELIVERY_TARGET as DELIVERY } from '../src/checkout/checkout-functions.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { runsOf } from './helpers/function-runs.js';
import { storeWithApp } from './helpers/actors.js';
import { address, insertProduct, uniq } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const { create, change, rates } = checkoutCalls(() => h);

describe('delivery-option functions run whenever the rates are computed (C11.4)', () => {
  it('a quote that finds no rate runs them too, on an empty deliveryOptions, and records the run', async () => {
    const s = await storeWithApp(h, {
      scopes: ['read_orders'], tier: 'enterprise',
      extensions: { functions: [{ handle: 'count', target: DELIVERY, expression: '{"operations": []}' }] },
    });
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
    await insertSimpleZone(h, s.merchant.storeId, { name: 'UK', countries: ['GB'], price: 500 });
    const made = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address });
    expect(made.statusCode, made.body).toBe(201);
    const token = made.json().data.checkout.token as string;
    const gb = await rates(s, token);
    expect(gb.json().data.shipping_rates).toHaveLength(1);
    expect((await runsOf(h, s, 1, 'count')).map((r: any) => r.input.deliveryOptions.length)).toEqual([1]);

    // No zone holds France: the rates are computed, and there are none.
    const moved = await change(s, token, { shipping_address: { ...address, country_code: 'FR', country: 'France' } });
    expect(moved.statusCode, moved.body).toBe(200);
    const fr = await rates(s, token);
    expect(fr.statusCode, fr.body).toBe(200);
    expect(fr.json().data.shipping_rates).toEqual([]);
    const runs = await runsOf(h, s, 2, 'count');
    expect(runs.map((r: any) => [r.status, r.input.deliveryOptions.length])).toEqual([['success', 0], ['success', 1]]);
  });
});
