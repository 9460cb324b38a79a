// An order's address names follow its codes (src/orders/address-names.ts; docs/decisions.md,
// "Orders": an address's names follow its codes), and a checkout's order is the order the buyer
// gave (C15.1). Found in review, each failing before its fix:
// - a checkout asks for `country_code` only (C15.1), but the `orders/create` body carries `country`
//   and `province` alone (app-api.md, Payload conventions): the buyer's order reached the shipping
//   app with no country, the merchant record had no state or country, sales analytics (C6.8) filed
//   it under Unknown, and the new customer had no country; a `country` naming another country than
//   the code (the rates were quoted for the code) went to the app as given;
// - the customer a completion created had no name or phone, though the address had them;
// - a checkout that needs no shipping made an order whose address was an object of nulls;
// - with a FreeShipping code the order's shipping line said 0.00, not the chosen rate's price.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { insertProduct, orderStore, takeOrder, uniq } from './helpers/orders.js';
import { eventsOf } from './helpers/events.js';
import { alpha2, countryName } from '../src/shipping/countries.js';
import { withPlaceNames } from '../src/orders/address-names.js';
import countries from 'i18n-iso-countries/index.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const { create, change, rates, complete } = checkoutCalls(() => h);
const codesOnly = { first_name: 'Ada', last_name: 'Lovelace', address1: '1 Unter den Linden', city: 'Berlin', province_code: 'BE', country_code: 'DE', zip: '10117', phone: '+49 30 1234' };

async function shopWithZone(countriesServed: string[]) {
  const s = await orderStore(h);
  const product = await insertProduct(h, s.merchant.storeId, { price: 2500, stock: 50 });
  await insertSimpleZone(h, s.merchant.storeId, { name: 'Standard', countries: countriesServed, price: 499 });
  return { s, product };
}

/** A checkout to `address`, its zone rate chosen and paid by card, completed: the order and its orders/create body. */
async function bought(s: Awaited<ReturnType<typeof orderStore>>, productId: string, address: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const email = `buyer-${uniq()}@example.com`;
  const made = await create(s, { email, line_items: [{ product_id: productId, quantity: 1 }], shipping_address: address, ...extra });
  expect(made.statusCode, made.body).toBe(201);
  const checkout = made.json().data.checkout;
  const offered = (await rates(s, checkout.token)).json().data.shipping_rates;
  expect(offered.length).toBeGreaterThan(0);
  const chosen = await change(s, checkout.token, { shipping_rate: { handle: offered[0].handle }, payment_method: 'card' });
  expect(chosen.statusCode, chosen.body).toBe(200);
  let done: Awaited<ReturnType<typeof complete>> | undefined;
  const events = await eventsOf(h, s.merchant.storeId, async () => {
    done = await complete(s, checkout.token);
  });
  expect(done!.statusCode, done!.body).toBe(201);
  const created = events.find((e) => e.topic === 'orders/create')!;
  return { email, checkout: chosen.json().data.checkout, order: done!.json().data.order, created: created.payload as any };
}

describe('an address given by its codes gets its names', () => {
  it('every assigned country code has an English name, and only a name of another country is replaced', () => {
    const codes = Object.keys(countries.getAlpha2Codes());
    expect(codes.length).toBeGreaterThan(240);
    for (const code of codes) {
      const name = countryName(code);
      expect(name, code).toEqual(expect.any(String));
      expect(withPlaceNames({ country_code: code }).country, code).toBe(name);
      // The code itself, in any case, and the name are kept as given.
      expect(withPlaceNames({ country_code: code, country: code.toLowerCase() }).country).toBe(code.toLowerCase());
      expect(withPlaceNames({ country_code: code, country: name! }).country).toBe(name);
    }
    expect(withPlaceNames({ country_code: 'US', country: 'United States' }).country).toBe('United States');
    expect(withPlaceNames({ country_code: 'US', country: 'France' }).country).toBe('United States of America');
    expect(withPlaceNames({ country_code: 'GB', province_code: 'LND' })).toMatchObject({ country: 'United Kingdom', province: 'LND' });
    expect(withPlaceNames({ country_code: 'GB', province: 'Greater London', province_code: 'LND' }).province).toBe('Greater London');
    // Not an assigned code: nothing is made up.
    expect(alpha2('XX')).toBeNull();
    expect(withPlaceNames({ country_code: 'XX' }).country).toBeUndefined();
  });

  it("a buyer's checkout given codes only: the order, its orders/create body, the customer and sales analytics all name the place", async () => {
    const { s, product } = await shopWithZone(['DE']);
    const { email, checkout, order, created } = await bought(s, product.id, codesOnly);
    expect(checkout.shipping_address).toMatchObject({ country: 'Germany', country_code: 'DE', province: 'BE', province_code: 'BE' });
    expect(order.shipping_address).toMatchObject({ country: 'Germany', country_code: 'DE', province: 'BE', province_code: 'BE' });
    expect(created.shipping_address).toMatchObject({ country: 'Germany', province: 'BE', city: 'Berlin' });
    // The customer as POST /orders makes one: the buyer's name and phone, and the address.
    expect(created.customer).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', email });
    const customer = (await h.req('GET', `/api/v1/customers/${order.customer.id}.json`, { token: s.accessToken })).json().customer;
    expect(customer).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', phone: '+49 30 1234' });
    expect(customer.default_address).toMatchObject({ country: 'Germany', province: 'BE' });
    const sales = await h.req('GET', '/api/v1/analytics/sales?range=today', { token: s.accessToken });
    expect(sales.statusCode, sales.body).toBe(200);
    expect(Object.keys(sales.json().data.saleByTopRegion)).toEqual(['BE']);
  });

  it('an address with a country code and no province is filed under the country\'s name in sales analytics (C6.8)', async () => {
    const { s, product } = await shopWithZone(['FR']);
    const { province_code: _none, ...noProvince } = codesOnly;
    const { order } = await bought(s, product.id, { ...noProvince, city: 'Paris', country_code: 'FR', zip: '75001' });
    expect(order.shipping_address).toMatchObject({ country: 'France', country_code: 'FR', province: null, province_code: null });
    const sales = (await h.req('GET', '/api/v1/analytics/sales?range=today', { token: s.accessToken })).json().data;
    expect(sales.saleByTopRegion).toEqual({ France: 29.99 });
  });

  it('a country naming another country than the code is the code\'s: the rates were quoted for the code', async () => {
    const { s, product } = await shopWithZone(['US']);
    const { order, created } = await bought(s, product.id, { ...codesOnly, country: 'France', country_code: 'US', province_code: 'OR' });
    expect(order.shipping_address).toMatchObject({ country: 'United States of America', country_code: 'US', province: 'OR' });
    expect(created.shipping_address.country).toBe('United States of America');
  });

  it('POST /orders given codes only names the place as well; a name given is kept', async () => {
    const s = await orderStore(h);
    const product = await insertProduct(h, s.merchant.storeId, { price: 1000 });
    const body = (address: Record<string, unknown>) => ({
      customer: { email: `m-${uniq()}@example.com` }, paymentMethod: 'card', line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address,
    });
    const made = await takeOrder(h, s.merchant.token, body({ first_name: 'T', last_name: 'U', address1: '1 St', city: 'Portland', province_code: 'OR', country_code: 'US', zip: '97201' }));
    expect(made).toMatchObject({ state: 'OR', country: 'United States of America' });
    const kept = await takeOrder(h, s.merchant.token, body({ address1: '1 St', city: 'Portland', province: 'Oregon', country: 'US', zip: '97201' }));
    expect(kept).toMatchObject({ state: 'Oregon', country: 'US' });
    const sales = (await h.req('GET', '/api/v1/analytics/sales?range=today', { token: s.accessToken })).json().data;
    expect(sales.saleByTopRegion).toEqual({ OR: 10, Oregon: 10 });
  });

  it('orders placed before: the migration fills the names from the codes, and keeps names given', async () => {
    const { s, product } = await shopWithZone(['DE']);
    const { order } = await bought(s, product.id, codesOnly);
    const other = await takeOrder(h, s.merchant.token, {
      customer: { email: `m-${uniq()}@example.com` }, paymentMethod: 'card', line_items: [{ product_id: product.id, quantity: 1 }],
      shipping_address: { address1: '1 St', city: 'Lyon', province: 'Rhône', country: 'Frankreich', country_code: 'FR' },
    });
    // As such orders were stored before the names were filled in.
    await h.db.query(`UPDATE orders SET shipping_address = shipping_address - 'country' - 'province', billing_address = billing_address - 'country' - 'province' WHERE id = $1`, [order.id]);
    const keptBefore = (await h.db.query<{ a: unknown }>('SELECT shipping_address AS a FROM orders WHERE id = $1', [other.orderId])).rows[0].a;
    const migration = readFileSync(new URL('../src/db/migrations/0028_order_address_names.sql', import.meta.url), 'utf8');
    await h.db.transaction(async (tx) => {
      await tx.exec(migration);
    });
    const { rows } = await h.db.query<{ s: any; b: any; region: string }>('SELECT shipping_address AS s, billing_address AS b, sales_region AS region FROM orders WHERE id = $1', [order.id]);
    expect(rows[0].s).toMatchObject({ country: 'Germany', province: 'BE', country_code: 'DE' });
    expect(rows[0].b).toMatchObject({ country: 'Germany', province: 'BE' });
    expect(rows[0].region).toBe('BE');
    expect((await h.db.query<{ a: unknown }>('SELECT shipping_address AS a FROM orders WHERE id = $1', [other.orderId])).rows[0].a).toEqual(keptBefore);
  });
});

describe("a checkout's order (C15.1)", () => {
  it('a checkout that needs no shipping makes an order with no address (null), and its customer with none', async () => {
    const s = await orderStore(h);
    const card = await insertProduct(h, s.merchant.storeId, { price: 2000 });
    await h.db.query('UPDATE products SET requires_shipping = false WHERE id = $1', [card.id]);
    const made = await create(s, { email: `d-${uniq()}@example.com`, line_items: [{ product_id: card.id, quantity: 1 }] });
    expect(made.statusCode, made.body).toBe(201);
    const token = made.json().data.checkout.token;
    expect((await change(s, token, { payment_method: 'card' })).statusCode).toBe(200);
    let done: Awaited<ReturnType<typeof complete>> | undefined;
    const events = await eventsOf(h, s.merchant.storeId, async () => {
      done = await complete(s, token);
    });
    expect(done!.statusCode, done!.body).toBe(201);
    const order = done!.json().data.order;
    expect(order.shipping_address).toBeNull();
    expect(order.billing_address).toBeNull();
    expect((events.find((e) => e.topic === 'orders/create')!.payload as any).shipping_address).toBeNull();
    const customer = (await h.req('GET', `/api/v1/customers/${order.customer.id}.json`, { token: s.accessToken })).json().customer;
    expect(customer.default_address ?? null).toBeNull();
  });

  it("with a FreeShipping code the order's shipping line is the chosen rate, at its price; what is charged is shipping_price", async () => {
    const { s, product } = await shopWithZone(['DE']);
    const code = `FREE${uniq()}`.toUpperCase().replace(/[^A-Z0-9]/g, '');
    const res = await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, type: 'FreeShipping' } });
    expect(res.statusCode, res.body).toBe(201);
    const { checkout, order, created } = await bought(s, product.id, codesOnly, { discount_code: code });
    expect(checkout.shipping_line).toMatchObject({ price: '4.99' });
    expect(order.shipping_lines).toEqual([expect.objectContaining({ price: '4.99', source: null })]);
    expect(order).toMatchObject({ shipping_price: '0.00', total_discounts: '4.99', total_price: '25.00' });
    expect(created.shipping_lines[0].price).toBe('4.99');
    expect(created.shipping_price).toBe('0.00');
  });
});
