// A customer's first and last name come back as they were sent (app-api.md Customer: `first_name`,
// `last_name`; C6.3 get, list, update; C7.1 merchant `POST /customers` and an order's new
// customer; C8.8 customers/* payloads in the REST shape). The name was kept as one combined string
// split at its first space: a last name sent alone came back as the first name, and a later
// `first_name` then replaced it, losing the last name ("Lee", then first_name "Ann": "Ann").
// Rows written before the split point was kept (first_name_length NULL) keep the old split.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, unlimitedLimiter, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';
import { events } from './helpers/events.js';
import { insertProduct, orderBody, takeOrder } from './helpers/orders.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

const uniq = () => randomBytes(4).toString('hex');
const SCOPES = ['read_customers', 'write_customers', 'read_orders', 'write_orders'];
const store = () => storeWithApp(h, { scopes: SCOPES, tier: 'enterprise' });
type Store = Awaited<ReturnType<typeof store>>;

const names = (c: { first_name: string | null; last_name: string | null; name: string }) => ({ first_name: c.first_name, last_name: c.last_name, name: c.name });

async function create(s: Store, body: Record<string, unknown>) {
  const res = await h.req('POST', '/api/v1/customers.json', { token: s.accessToken, body: { email: `n-${uniq()}@example.com`, ...body } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().customer;
}

async function update(s: Store, id: string, body: Record<string, unknown>) {
  const res = await h.req('PUT', `/api/v1/customers/${id}.json`, { token: s.accessToken, body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().customer;
}

/** The customer as GET, the list and its latest customers/* event show it: all must agree (C6.3, C8.8). */
async function everywhere(s: Store, id: string) {
  const got = (await h.req('GET', `/api/v1/customers/${id}.json`, { token: s.accessToken })).json().customer;
  const list = (await h.req('GET', '/api/v1/customers.json?limit=250', { token: s.accessToken })).json().customers;
  const listed = list.find((c: { id: string }) => c.id === id);
  const payloads = (await events(h, s.merchant.storeId, 'customers/')).filter((e) => e.payload.id === id);
  return { got, listed, payloads };
}

describe('first and last name are kept apart (app-api.md Customer; C6.3)', () => {
  it('a last name alone stays the last name; a later first_name keeps it (the reported bug)', async () => {
    const s = await store();
    const created = await create(s, { last_name: 'Lee' });
    expect(names(created)).toEqual({ first_name: null, last_name: 'Lee', name: 'Lee' });

    const updated = await update(s, created.id, { first_name: 'Ann' });
    expect(names(updated)).toEqual({ first_name: 'Ann', last_name: 'Lee', name: 'Ann Lee' });

    const { got, listed, payloads } = await everywhere(s, created.id);
    expect(got).toEqual(updated);
    expect(listed).toEqual(updated);
    expect(payloads.map((e) => e.topic)).toEqual(['customers/create', 'customers/update']);
    expect(payloads[0].payload).toEqual(created);
    expect(payloads[1].payload).toEqual(updated);
  });

  it('"Mary Ann" + "Smith" round-trips, and survives changing either part (decisions.md no longer needs the lossy split)', async () => {
    const s = await store();
    const created = await create(s, { first_name: 'Mary Ann', last_name: 'Smith' });
    expect(names(created)).toEqual({ first_name: 'Mary Ann', last_name: 'Smith', name: 'Mary Ann Smith' });

    const newLast = await update(s, created.id, { last_name: 'van der Berg' });
    expect(names(newLast)).toEqual({ first_name: 'Mary Ann', last_name: 'van der Berg', name: 'Mary Ann van der Berg' });
    const noFirst = await update(s, created.id, { first_name: null });
    expect(names(noFirst)).toEqual({ first_name: null, last_name: 'van der Berg', name: 'van der Berg' });
    const noLast = await update(s, created.id, { first_name: '  José María ', last_name: '' });
    expect(names(noLast)).toEqual({ first_name: 'José María', last_name: null, name: 'José María' });
    const onlyPhone = await update(s, created.id, { phone: '+1555' });
    expect(names(onlyPhone)).toEqual(names(noLast));

    const { got, listed, payloads } = await everywhere(s, created.id);
    expect(got).toEqual(onlyPhone);
    expect(listed).toEqual(onlyPhone);
    expect(payloads.map((e) => names(e.payload))).toEqual([created, newLast, noFirst, noLast, onlyPhone].map(names));
  });

  it('characters beyond the BMP count once (the length is in code points, as SQL counts them)', async () => {
    const s = await store();
    const created = await create(s, { first_name: '𝒜da 🌹', last_name: 'Lee' });
    expect(names(created)).toEqual({ first_name: '𝒜da 🌹', last_name: 'Lee', name: '𝒜da 🌹 Lee' });
    const { rows } = await h.db.query<{ first: string }>('SELECT left(name, first_name_length) AS first FROM customers WHERE id = $1', [created.id]);
    expect(rows[0].first).toBe('𝒜da 🌹');
  });

  it('the merchant admin create (C7.1) keeps a last name alone as the last name', async () => {
    const s = await store();
    const res = await h.req('POST', '/customers', { token: s.merchant.token, body: { email: `m-${uniq()}@example.com`, last_name: 'Okafor' } });
    expect(res.statusCode, res.body).toBe(201);
    expect(names(res.json().data)).toEqual({ first_name: null, last_name: 'Okafor', name: 'Okafor' });
  });

  it("an order's new customer (C7.1) keeps first and last apart, and the order shows the customer as GET does", async () => {
    const s = await store();
    const p = await insertProduct(h, s.merchant.storeId);
    const email = `o-${uniq()}@example.com`;
    const order = await takeOrder(h, s.merchant.token, orderBody(p, { customer: { email, first_name: 'Mary Ann', last_name: 'Smith' } }));
    const { rows } = await h.db.query<{ id: string }>('SELECT id FROM customers WHERE store_id = $1 AND email = $2', [s.merchant.storeId, email]);
    const got = (await h.req('GET', `/api/v1/customers/${rows[0].id}.json`, { token: s.accessToken })).json().customer;
    expect(names(got)).toEqual({ first_name: 'Mary Ann', last_name: 'Smith', name: 'Mary Ann Smith' });

    const lastOnly = await takeOrder(h, s.merchant.token, orderBody(p, { customer: { email: `o-${uniq()}@example.com`, last_name: 'Lee' } }));
    const apiOrder = (await h.req('GET', `/api/v1/orders/${lastOnly.orderId}.json`, { token: s.accessToken })).json().order;
    expect(apiOrder.customer).toMatchObject({ first_name: null, last_name: 'Lee' });
    const first = (await h.req('GET', `/api/v1/orders/${order.orderId}.json`, { token: s.accessToken })).json().order;
    expect(first.customer).toMatchObject({ id: got.id, first_name: 'Mary Ann', last_name: 'Smith' });
  });
});

describe('rows written before the split point was kept keep the old rule (first_name_length NULL)', () => {
  it('"Ada King Lovelace" reads as Ada / King Lovelace; a single word as the first name; an update then keeps the new split', async () => {
    const s = await store();
    const old = uuidv7();
    const single = uuidv7();
    const now = new Date();
    await h.db.query(
      `INSERT INTO customers (id, store_id, email, name, created_at, updated_at)
       VALUES ($1, $3, $4, 'Ada King Lovelace', $6, $6), ($2, $3, $5, 'Cher', $6, $6)`,
      [old, single, s.merchant.storeId, `old-${uniq()}@example.com`, `single-${uniq()}@example.com`, now],
    );
    const got = (await h.req('GET', `/api/v1/customers/${old}.json`, { token: s.accessToken })).json().customer;
    expect(names(got)).toEqual({ first_name: 'Ada', last_name: 'King Lovelace', name: 'Ada King Lovelace' });
    const cher = (await h.req('GET', `/api/v1/customers/${single}.json`, { token: s.accessToken })).json().customer;
    expect(names(cher)).toEqual({ first_name: 'Cher', last_name: null, name: 'Cher' });

    const updated = await update(s, old, { first_name: 'Augusta Ada' });
    expect(names(updated)).toEqual({ first_name: 'Augusta Ada', last_name: 'King Lovelace', name: 'Augusta Ada King Lovelace' });
    expect((await h.req('GET', `/api/v1/customers/${old}.json`, { token: s.accessToken })).json().customer).toEqual(updated);
  });

  it('a name rewritten by SQL alone (the length no longer lands on its space) falls back to the old rule, never a cut word', async () => {
    const s = await store();
    const c = await create(s, { first_name: 'Ann', last_name: 'Lee' });
    await h.db.query("UPDATE customers SET name = 'Bartholomew Lee' WHERE id = $1", [c.id]);
    const got = (await h.req('GET', `/api/v1/customers/${c.id}.json`, { token: s.accessToken })).json().customer;
    expect(names(got)).toEqual({ first_name: 'Bartholomew', last_name: 'Lee', name: 'Bartholomew Lee' });
    await h.db.query("UPDATE customers SET name = '' WHERE id = $1", [c.id]);
    const erased = (await h.req('GET', `/api/v1/customers/${c.id}.json`, { token: s.accessToken })).json().customer;
    expect(names(erased)).toEqual({ first_name: null, last_name: null, name: '' });
  });
});
