// Customers (app-api.md Customer, `POST /api/v1/customers.json`; C6.3 list, get, update, delete;
// C7.1 merchant `POST /customers`; events customers/create, customers/update, customers/delete in
// the change's transaction, C8.1, payloads in the REST shape, C8.8). Each test names its clause.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { operatorToken, signupMerchant, signupPartner, staffToken, storeWithApp } from './helpers/actors.js';
import { expectEnvelopeError, expectErrorsBody } from './helpers/expect.js';
import { events } from './helpers/events.js';
import { uuidv7 } from '../src/ids.js';
import { insertDemoStoreData } from '../src/seed/demo-store.js';
import { createCustomerInTx, readCustomerPatch } from '../src/customers/customers.service.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

type Res = Awaited<ReturnType<Harness['req']>>;
const BASE = 'http://svc.test';
const uniq = () => randomBytes(4).toString('hex');
const ALL = ['read_customers', 'write_customers'];

/** A store with an installed app; enterprise tier so that no test here meets the rate limit. */
const store = (scopes = ALL) => storeWithApp(h, { scopes, tier: 'enterprise' });

/** The shared errors body, from an App API route: with its version header (C5.1). */
function expectApiErrorsBody(res: Res, status: number, key = 'base') {
  const errors = expectErrorsBody(res, status, key);
  expect(res.headers['x-svc-api-version']).toBe('2026-06');
  return errors;
}

/** The store's customers/* events. */
const customerEvents = (storeId: string) => events(h, storeId, 'customers/');

const post = (token: string, body: unknown) => h.req('POST', '/api/v1/customers.json', { token, body });

async function create(token: string, body: Record<string, unknown> = {}) {
  const res = await post(token, { email: `c-${uniq()}@example.com`, ...body });
  expect(res.statusCode).toBe(201);
  return res.json().customer;
}

let orderNumber = 5000;
async function insertOrder(storeId: string, customerId: string | null, o: { totalMinor: number; refundedMinor?: number; status?: string; cancelled?: boolean }) {
  const id = uuidv7();
  const now = new Date();
  await h.db.query(
    `INSERT INTO orders (id, store_id, order_number, customer_id, email, status, financial_status, cancelled_at, total_minor, refunded_minor,
                         confirmation_number, processed_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'o@example.com', $5, 'paid', $6, $7, $8, $9, $10, $10, $10)`,
    [id, storeId, ++orderNumber, customerId, o.status ?? (o.cancelled ? 'canceled' : 'paid'), o.cancelled ? now : null,
      o.totalMinor, o.refundedMinor ?? 0, `C${orderNumber}`, now],
  );
  return id;
}

// =============================================================================================

describe('POST /api/v1/customers.json (app-api.md; C6.3: 201 bare { customer })', () => {
  it('answers 201 with the customer, field by field', async () => {
    const s = await store();
    const res = await post(s.accessToken, {
      email: 'Ada.Lovelace@Example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: '+15550101',
      accepts_marketing: true,
      note: 'Prefers email',
      tags: ['vip', 'newsletter'],
      addresses: [{ address1: '1 Main Street', city: 'London', province: 'LND', country: 'GB', zip: 'N1 1AA', phone: '+442000000' }],
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-svc-api-version']).toBe('2026-06');
    const body = res.json();
    expect(Object.keys(body)).toEqual(['customer']);
    const address = { address1: '1 Main Street', city: 'London', province: 'LND', country: 'GB', zip: 'N1 1AA', phone: '+442000000' };
    expect(body.customer).toEqual({
      id: expect.any(String),
      email: 'ada.lovelace@example.com', // stored lowercased (docs/decisions.md)
      first_name: 'Ada',
      last_name: 'Lovelace',
      name: 'Ada Lovelace',
      phone: '+15550101',
      accepts_marketing: true,
      orders_count: 0,
      total_spent: '0.00',
      tags: [],
      addresses: [address],
      default_address: address,
      tax_exempt: false,
      note: 'Prefers email',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(body.customer.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(body.customer.created_at).toISOString()).toBe(body.customer.created_at);
  });

  it('defaults: accepts_marketing false, no address, tags empty, no phone or note', async () => {
    const s = await store();
    const res = await post(s.accessToken, { email: `only-${uniq()}@example.com` });
    expect(res.statusCode).toBe(201);
    expect(res.json().customer).toMatchObject({
      first_name: null, last_name: null, name: '', phone: null, accepts_marketing: false, orders_count: 0, total_spent: '0.00',
      tags: [], addresses: [], default_address: null, tax_exempt: false, note: null,
    });
  });

  it('stores the subset only: the first address, and of it only address1, city, province, country, zip, phone; tags are dropped', async () => {
    const s = await store();
    const created = await create(s.accessToken, {
      tags: 'a, b',
      company: 'ignored',
      addresses: [
        { address1: '2 High St', address2: 'Flat 3', city: 'Leeds', province: 'WYK', province_code: 'WYK', country: 'GB', country_code: 'GB', zip: 'LS1', phone: '+44', first_name: 'X', company: 'Y' },
        { address1: 'second address', city: 'Elsewhere' },
      ],
    });
    const only = { address1: '2 High St', city: 'Leeds', province: 'WYK', country: 'GB', zip: 'LS1', phone: '+44' };
    expect(created.addresses).toEqual([only]);
    expect(created.default_address).toEqual(only);
    expect(created.tags).toEqual([]);
    const got = (await h.req('GET', `/api/v1/customers/${created.id}.json`, { token: s.accessToken })).json().customer;
    expect(got).toEqual(created);
    const { rows } = await h.db.query('SELECT address FROM customers WHERE id = $1', [created.id]);
    expect(rows[0].address).toEqual(only);
  });

  it('one combined name: first and last are joined, and come back as sent (docs/decisions.md, migration 0030)', async () => {
    const s = await store();
    const two = await create(s.accessToken, { first_name: 'Mary Ann', last_name: 'Smith' });
    expect(two).toMatchObject({ name: 'Mary Ann Smith', first_name: 'Mary Ann', last_name: 'Smith' });
    const firstOnly = await create(s.accessToken, { first_name: 'Cher' });
    expect(firstOnly).toMatchObject({ name: 'Cher', first_name: 'Cher', last_name: null });
    const lastOnly = await create(s.accessToken, { last_name: 'Hopper' });
    expect(lastOnly).toMatchObject({ name: 'Hopper', first_name: null, last_name: 'Hopper' });
    const { rows } = await h.db.query('SELECT name FROM customers WHERE id = $1', [two.id]);
    expect(rows[0].name).toBe('Mary Ann Smith');
  });

  it('takes the body wrapped REST-style, { customer: { ... } }', async () => {
    const s = await store();
    const res = await post(s.accessToken, { customer: { email: `wrapped-${uniq()}@example.com`, first_name: 'Wren' } });
    expect(res.statusCode).toBe(201);
    expect(res.json().customer.first_name).toBe('Wren');
  });

  it('missing, blank or malformed email -> 400 errors body on the email key; nothing stored, no event', async () => {
    const s = await store();
    for (const body of [{}, { email: '' }, { email: '   ' }, { email: null }, { first_name: 'No Email' }]) {
      const errors = expectApiErrorsBody(await post(s.accessToken, body), 400, 'email');
      expect(errors.email).toEqual(["can't be blank"]);
    }
    expect(expectApiErrorsBody(await post(s.accessToken, { email: 'not-an-email' }), 400, 'email').email).toEqual(['is invalid']);
    expectApiErrorsBody(await post(s.accessToken, { email: 42 }), 400, 'email');
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM customers WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows[0].n).toBe(0);
    expect(await customerEvents(s.merchant.storeId)).toEqual([]);
  });

  it('a duplicate email (any case) -> 400 errors body "has already been taken"; another store may use it', async () => {
    const s = await store();
    const email = `dup-${uniq()}@example.com`;
    await create(s.accessToken, { email });
    const errors = expectApiErrorsBody(await post(s.accessToken, { email: email.toUpperCase() }), 400, 'email');
    expect(errors.email).toEqual(['has already been taken']);
    expect((await customerEvents(s.merchant.storeId)).length).toBe(1);
    const other = await store();
    expect((await post(other.accessToken, { email })).statusCode).toBe(201);
  });

  it('wrong field types -> 400 errors body naming the field', async () => {
    const s = await store();
    const cases: [Record<string, unknown>, string][] = [
      [{ accepts_marketing: 'yes' }, 'accepts_marketing'],
      [{ first_name: 7 }, 'first_name'],
      [{ phone: {} }, 'phone'],
      [{ note: ['x'] }, 'note'],
      [{ addresses: 'London' }, 'addresses'],
      [{ addresses: [{ city: 5 }] }, 'addresses[0].city'],
    ];
    for (const [extra, key] of cases) {
      expectApiErrorsBody(await post(s.accessToken, { email: `t-${uniq()}@example.com`, ...extra }), 400, key);
    }
  });

  it('malformed JSON, or a body that is no object -> 400 errors body (C5.6)', async () => {
    const s = await store();
    expectApiErrorsBody(await h.req('POST', '/api/v1/customers.json', { token: s.accessToken, payload: '{"email":', headers: { 'content-type': 'application/json' } }), 400);
    expectApiErrorsBody(await post(s.accessToken, ['a@example.com']), 400);
  });

  it('emits exactly one customers/create whose payload is the REST customer (C8.1, C8.8)', async () => {
    const s = await store();
    const created = await create(s.accessToken, { first_name: 'Eve', addresses: [{ city: 'Paris', country: 'FR' }] });
    const evs = await customerEvents(s.merchant.storeId);
    expect(evs).toEqual([{ topic: 'customers/create', payload: created }]);
  });

  it('a rolled-back create leaves neither the customer nor its event (C8.1)', async () => {
    const s = await store();
    const email = `rollback-${uniq()}@example.com`;
    await expect(
      h.db.transaction(async (tx) => {
        await createCustomerInTx(tx, s.merchant.storeId, readCustomerPatch({ email }, true), h.clock.now());
        throw new Error('the rest of the change failed');
      }),
    ).rejects.toThrow('the rest of the change failed');
    const { rows } = await h.db.query('SELECT 1 FROM customers WHERE store_id = $1', [s.merchant.storeId]);
    expect(rows).toEqual([]);
    expect(await customerEvents(s.merchant.storeId)).toEqual([]);
    // And the same email is free afterwards.
    expect((await post(s.accessToken, { email })).statusCode).toBe(201);
  });
});

describe('orders_count and total_spent are computed from orders (C6.3; docs/decisions.md)', () => {
  it('orders_count counts every order; total_spent sums totals less refunds, cancelled orders left out', async () => {
    const s = await store();
    const c = await create(s.accessToken);
    const other = await create(s.accessToken);
    await insertOrder(s.merchant.storeId, c.id, { totalMinor: 2550 });
    await insertOrder(s.merchant.storeId, c.id, { totalMinor: 1000, refundedMinor: 250, status: 'paid' });
    await insertOrder(s.merchant.storeId, c.id, { totalMinor: 9999, cancelled: true, refundedMinor: 9999 });
    await insertOrder(s.merchant.storeId, c.id, { totalMinor: 4000, status: 'pending' });
    await insertOrder(s.merchant.storeId, other.id, { totalMinor: 70000 });
    await insertOrder(s.merchant.storeId, null, { totalMinor: 123 });
    const got = (await h.req('GET', `/api/v1/customers/${c.id}.json`, { token: s.accessToken })).json().customer;
    expect(got.orders_count).toBe(4);
    expect(got.total_spent).toBe('73.00'); // 25.50 + 7.50 + 40.00
    const list = (await h.req('GET', '/api/v1/customers.json', { token: s.accessToken })).json().customers;
    expect(list.find((x: any) => x.id === c.id)).toMatchObject({ orders_count: 4, total_spent: '73.00' });
    expect(list.find((x: any) => x.id === other.id)).toMatchObject({ orders_count: 1, total_spent: '700.00' });
  });
});

describe('GET /api/v1/customers.json (C6.3; C5.4 Link paging)', () => {
  it('newest first, bare { customers }, Link rel="next"/"previous" carrying limit; none on a single page', async () => {
    const s = await store();
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await create(s.accessToken, { first_name: `N${i}` }));
      await h.advance(1);
    }
    const newestFirst = made.map((c) => c.id).reverse();

    const all = await h.req('GET', '/api/v1/customers.json', { token: s.accessToken });
    expect(all.statusCode).toBe(200);
    expect(Object.keys(all.json())).toEqual(['customers']);
    expect(all.json().customers.map((c: any) => c.id)).toEqual(newestFirst);
    expect(all.headers.link).toBeUndefined();

    const p1 = await h.req('GET', '/api/v1/customers.json?limit=2', { token: s.accessToken });
    expect(p1.json().customers.map((c: any) => c.id)).toEqual(newestFirst.slice(0, 2));
    expect(p1.headers.link).toBe(`<${BASE}/api/v1/customers.json?page=2&limit=2>; rel="next"`);

    const p2 = await h.req('GET', '/api/v1/customers.json?limit=2&page=2&ignored=1', { token: s.accessToken });
    expect(p2.json().customers.map((c: any) => c.id)).toEqual(newestFirst.slice(2, 4));
    expect(p2.headers.link).toBe(`<${BASE}/api/v1/customers.json?page=3&limit=2>; rel="next", <${BASE}/api/v1/customers.json?page=1&limit=2>; rel="previous"`);

    const p3 = await h.req('GET', '/api/v1/customers.json?limit=2&page=3', { token: s.accessToken });
    expect(p3.json().customers.map((c: any) => c.id)).toEqual(newestFirst.slice(4));
    expect(p3.headers.link).toBe(`<${BASE}/api/v1/customers.json?page=2&limit=2>; rel="previous"`);

    const beyond = await h.req('GET', '/api/v1/customers.json?limit=2&page=9', { token: s.accessToken });
    expect(beyond.json().customers).toEqual([]);

    const clamped = await h.req('GET', '/api/v1/customers.json?limit=1000', { token: s.accessToken });
    expect(clamped.json().customers).toHaveLength(5);
  });

  it("lists only the token's store", async () => {
    const a = await store();
    const b = await store();
    const mine = await create(a.accessToken);
    await create(b.accessToken);
    const list = (await h.req('GET', '/api/v1/customers.json', { token: a.accessToken })).json().customers;
    expect(list.map((c: any) => c.id)).toEqual([mine.id]);
  });
});

describe('GET /api/v1/customers/{id}.json (C6.3)', () => {
  it('answers { customer }; an unknown id, a non-UUID or another store\'s customer -> 404 errors body', async () => {
    const s = await store();
    const c = await create(s.accessToken, { first_name: 'Gia' });
    const res = await h.req('GET', `/api/v1/customers/${c.id}.json`, { token: s.accessToken });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ customer: c });
    const other = await store();
    const theirs = await create(other.accessToken);
    for (const id of [uuidv7(), 'not-a-uuid', '123', theirs.id]) {
      expectApiErrorsBody(await h.req('GET', `/api/v1/customers/${id}.json`, { token: s.accessToken }), 404);
    }
  });
});

describe('PUT /api/v1/customers/{id}.json (C6.3: emits customers/update)', () => {
  it('changes the fields sent, keeps the rest, answers { customer } and emits customers/update with it', async () => {
    const s = await store();
    const c = await create(s.accessToken, {
      first_name: 'Ada', last_name: 'Byron', phone: '+1', note: 'n', accepts_marketing: false,
      addresses: [{ address1: 'Old Road', city: 'Old Town' }],
    });
    await h.advance(5);
    const res = await h.req('PUT', `/api/v1/customers/${c.id}.json`, {
      token: s.accessToken,
      body: { last_name: 'Lovelace', accepts_marketing: true, tags: ['x'], addresses: [{ address1: 'New Road', city: 'New Town', zip: '1' }] },
    });
    expect(res.statusCode).toBe(200);
    const updated = res.json().customer;
    expect(updated).toEqual({
      ...c,
      first_name: 'Ada',
      last_name: 'Lovelace',
      name: 'Ada Lovelace',
      accepts_marketing: true,
      addresses: [{ address1: 'New Road', city: 'New Town', province: null, country: null, zip: '1', phone: null }],
      default_address: { address1: 'New Road', city: 'New Town', province: null, country: null, zip: '1', phone: null },
      updated_at: expect.any(String),
    });
    expect(new Date(updated.updated_at).getTime()).toBeGreaterThan(new Date(c.updated_at).getTime());
    expect(await customerEvents(s.merchant.storeId)).toEqual([
      { topic: 'customers/create', payload: c },
      { topic: 'customers/update', payload: updated },
    ]);
  });

  it('null clears phone and note, addresses [] clears the address, a new email must be free', async () => {
    const s = await store();
    const taken = await create(s.accessToken);
    const c = await create(s.accessToken, { phone: '+1', note: 'n', addresses: [{ city: 'X' }] });
    const cleared = (await h.req('PUT', `/api/v1/customers/${c.id}.json`, { token: s.accessToken, body: { phone: null, note: null, addresses: [] } })).json().customer;
    expect(cleared).toMatchObject({ phone: null, note: null, addresses: [], default_address: null });

    const before = (await customerEvents(s.merchant.storeId)).length;
    const dup = await h.req('PUT', `/api/v1/customers/${c.id}.json`, { token: s.accessToken, body: { email: taken.email.toUpperCase() } });
    expect(expectApiErrorsBody(dup, 400, 'email').email).toEqual(['has already been taken']);
    expectApiErrorsBody(await h.req('PUT', `/api/v1/customers/${c.id}.json`, { token: s.accessToken, body: { email: '' } }), 400, 'email');
    expect((await customerEvents(s.merchant.storeId)).length).toBe(before); // failed updates emit nothing

    // Its own email, in another case, is not a duplicate.
    const same = await h.req('PUT', `/api/v1/customers/${c.id}.json`, { token: s.accessToken, body: { email: c.email.toUpperCase() } });
    expect(same.statusCode).toBe(200);
    expect(same.json().customer.email).toBe(c.email);
  });

  it('unknown or another store\'s customer -> 404 errors body, no event', async () => {
    const s = await store();
    const other = await store();
    const theirs = await create(other.accessToken);
    for (const id of [uuidv7(), theirs.id, 'nope']) {
      expectApiErrorsBody(await h.req('PUT', `/api/v1/customers/${id}.json`, { token: s.accessToken, body: { note: 'x' } }), 404);
    }
    expect((await customerEvents(other.merchant.storeId)).map((e) => e.topic)).toEqual(['customers/create']);
  });
});

describe('DELETE /api/v1/customers/{id}.json (C6.3: emits customers/delete)', () => {
  it('answers 200 {}, emits customers/delete with the customer as it was; orders stay, unlinked', async () => {
    const s = await store();
    const c = await create(s.accessToken, { first_name: 'Del' });
    const orderId = await insertOrder(s.merchant.storeId, c.id, { totalMinor: 1500 });
    const before = (await h.req('GET', `/api/v1/customers/${c.id}.json`, { token: s.accessToken })).json().customer;
    expect(before.orders_count).toBe(1);

    const res = await h.req('DELETE', `/api/v1/customers/${c.id}.json`, { token: s.accessToken });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    expect(res.headers['x-svc-api-version']).toBe('2026-06');

    expectApiErrorsBody(await h.req('GET', `/api/v1/customers/${c.id}.json`, { token: s.accessToken }), 404);
    const { rows } = await h.db.query<{ customer_id: string | null; email: string }>('SELECT customer_id, email FROM orders WHERE id = $1', [orderId]);
    expect(rows).toEqual([{ customer_id: null, email: 'o@example.com' }]);
    expect(await customerEvents(s.merchant.storeId)).toEqual([
      { topic: 'customers/create', payload: c },
      { topic: 'customers/delete', payload: before },
    ]);

    // Gone: a second delete is a 404 and emits nothing more; the email is free again.
    expectApiErrorsBody(await h.req('DELETE', `/api/v1/customers/${c.id}.json`, { token: s.accessToken }), 404);
    expect((await customerEvents(s.merchant.storeId)).length).toBe(2);
    expect((await post(s.accessToken, { email: c.email })).statusCode).toBe(201);
  });

  it("another store's customer -> 404 errors body, and it stays", async () => {
    const s = await store();
    const other = await store();
    const theirs = await create(other.accessToken);
    expectApiErrorsBody(await h.req('DELETE', `/api/v1/customers/${theirs.id}.json`, { token: s.accessToken }), 404);
    expect((await h.req('GET', `/api/v1/customers/${theirs.id}.json`, { token: other.accessToken })).statusCode).toBe(200);
  });
});

describe('authentication on every customer route (Rules 1-2; C5.1 errors body)', () => {
  const routes = (id: string) => [
    { method: 'POST', url: '/api/v1/customers.json', scope: 'write_customers', body: { email: `a-${uniq()}@example.com` } },
    { method: 'GET', url: '/api/v1/customers.json', scope: 'read_customers' },
    { method: 'GET', url: `/api/v1/customers/${id}.json`, scope: 'read_customers' },
    { method: 'PUT', url: `/api/v1/customers/${id}.json`, scope: 'write_customers', body: { note: 'x' } },
    { method: 'DELETE', url: `/api/v1/customers/${id}.json`, scope: 'write_customers' },
  ];

  it('no credential -> 401; a bad credential -> 401; both in the errors body, no rate-limit headers', async () => {
    for (const r of routes(uuidv7())) {
      for (const token of [undefined, 'svcat_never-issued']) {
        const res = await h.req(r.method, r.url, { token, body: r.body });
        expectApiErrorsBody(res, 401);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    }
  });

  it('a token without the route\'s scope -> 403 errors body (write does not imply read)', async () => {
    const owner = await store();
    const c = await create(owner.accessToken);
    const readOnly = await storeWithApp(h, { scopes: ['read_customers', 'read_products'], tier: 'enterprise' });
    const writeOnly = await storeWithApp(h, { scopes: ['write_customers'], tier: 'enterprise' });
    for (const r of routes(c.id)) {
      const token = r.scope === 'write_customers' ? readOnly.accessToken : writeOnly.accessToken;
      const res = await h.req(r.method, r.url, { token, body: r.body });
      expectApiErrorsBody(res, 403);
      expect(res.headers['x-ratelimit-limit']).toBe('500');
    }
    expect((await customerEvents(readOnly.merchant.storeId)).length + (await customerEvents(writeOnly.merchant.storeId)).length).toBe(0);
  });

  it("another store's customer -> 404 on get, update and delete (tokens are bound to their store)", async () => {
    const owner = await store();
    const c = await create(owner.accessToken);
    const stranger = await store();
    for (const r of routes(c.id).filter((r) => r.url.includes(c.id))) {
      expectApiErrorsBody(await h.req(r.method, r.url, { token: stranger.accessToken, body: r.body }), 404);
    }
    expect((await h.req('GET', `/api/v1/customers/${c.id}.json`, { token: owner.accessToken })).json().customer).toEqual(c);
  });
});

describe('merchant POST /customers (C7.1)', () => {
  it('201 envelope whose data is the customer in its App API shape; emits customers/create', async () => {
    const m = await signupMerchant(h);
    const res = await h.req('POST', '/customers', {
      token: m.token,
      body: { email: `shop-${uniq()}@example.com`, first_name: 'Walk', last_name: 'In', phone: '+1555', addresses: [{ city: 'Oslo', country: 'NO' }] },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ status: 201, state: 'success', message: null, data: expect.any(Object), count: null, pagination: null });
    expect(body.data).toMatchObject({ first_name: 'Walk', last_name: 'In', name: 'Walk In', accepts_marketing: false, tags: [], orders_count: 0, total_spent: '0.00' });
    expect(body.data.default_address).toEqual({ address1: null, city: 'Oslo', province: null, country: 'NO', zip: null, phone: null });
    const { rows } = await h.db.query('SELECT store_id FROM customers WHERE id = $1', [body.data.id]);
    expect(rows[0].store_id).toBe(m.storeId);
    expect(await customerEvents(m.storeId)).toEqual([{ topic: 'customers/create', payload: body.data }]);
  });

  it('errors are envelopes: missing or duplicate email 400; no token or a bad one 401; a partner 403', async () => {
    const m = await signupMerchant(h);
    const email = `e-${uniq()}@example.com`;
    expectEnvelopeError(await h.req('POST', '/customers', { token: m.token, body: { first_name: 'x' } }), 400);
    expect((await h.req('POST', '/customers', { token: m.token, body: { email } })).statusCode).toBe(201);
    expectEnvelopeError(await h.req('POST', '/customers', { token: m.token, body: { email } }), 400);
    expectEnvelopeError(await h.req('POST', '/customers', { body: { email: `n-${uniq()}@example.com` } }), 401);
    expectEnvelopeError(await h.req('POST', '/customers', { token: 'not-a-jwt', body: { email: `n-${uniq()}@example.com` } }), 401);
    const partner = await signupPartner(h);
    expectEnvelopeError(await h.req('POST', '/customers', { token: partner.token, body: { email: `n-${uniq()}@example.com` } }), 403);
    expect((await customerEvents(m.storeId)).length).toBe(1);
  });

  it('store staff create in their own store; a storeId in the body cannot point elsewhere', async () => {
    const m = await signupMerchant(h);
    const other = await signupMerchant(h);
    for (const role of ['STAFF_ADMIN', 'MANAGER'] as const) {
      const token = await staffToken(h, m.token, role);
      const res = await h.req('POST', '/customers', { token, body: { email: `${role}-${uniq()}@example.com`, storeId: other.storeId } });
      expect(res.statusCode).toBe(201);
      const { rows } = await h.db.query('SELECT store_id FROM customers WHERE id = $1', [res.json().data.id]);
      expect(rows[0].store_id).toBe(m.storeId);
    }
    expect(await customerEvents(other.storeId)).toEqual([]);
  });

  it('the operator names the store with storeId: 400 without it or for no store, 201 with it', async () => {
    const m = await signupMerchant(h);
    const ops = await operatorToken(h);
    expectEnvelopeError(await h.req('POST', '/customers', { token: ops, body: { email: `o-${uniq()}@example.com` } }), 400);
    expectEnvelopeError(await h.req('POST', '/customers', { token: ops, body: { email: `o-${uniq()}@example.com`, storeId: uuidv7() } }), 400);
    const res = await h.req('POST', '/customers', { token: ops, body: { email: `o-${uniq()}@example.com`, storeId: m.storeId } });
    expect(res.statusCode).toBe(201);
    expect((await customerEvents(m.storeId)).map((e) => e.topic)).toEqual(['customers/create']);
  });
});

describe('demo data (C1.5)', () => {
  it('the demo store shows its customers, with order counts and totals from its orders', async () => {
    const s = await store();
    await h.db.transaction((tx) => insertDemoStoreData(tx, s.merchant.storeId, h.clock.now()));
    const res = await h.req('GET', '/api/v1/customers.json', { token: s.accessToken });
    expect(res.statusCode).toBe(200);
    const byEmail = Object.fromEntries(res.json().customers.map((c: any) => [c.email, c]));
    expect(Object.keys(byEmail).sort()).toEqual(['ada@example.com', 'grace@example.com']);
    // Ada: a paid order of 55.00 and a cancelled one; Grace: one pending order of 23.00.
    expect(byEmail['ada@example.com']).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', accepts_marketing: true, orders_count: 2, total_spent: '55.00', note: 'VIP' });
    expect(byEmail['ada@example.com'].default_address).toEqual({ address1: '1 Main Street', city: 'New York', province: 'NY', country: 'US', zip: '10001', phone: '+15550100' });
    expect(byEmail['grace@example.com']).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', orders_count: 1, total_spent: '23.00' });
  });
});
