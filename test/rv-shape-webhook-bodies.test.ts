// app-api.md Payload conventions, C8.8: "Order, product, customer, collection and refund webhook
// bodies use snake_case and the same shape as the REST resource; money is decimal strings." A sweep
// of every topic of the Events table whose body is a resource: each is triggered on a real store
// with an app subscribed to every topic (real HTTP receiver), and each delivered body is compared
// with what the App API returns for that resource right after the change: same keys, same types,
// same values. Documented differences: `orders/create` is exactly app-api.md's field list (C8.8),
// delete topics carry the resource as it was just before (docs/decisions.md Catalog, Customers),
// fulfillments/* are the fulfillment as the API returns it (camelCase, docs/decisions.md Orders),
// `inventory_levels/update` is `{ product_id, variant_id, sku, available, updated_at }` with the
// product object's values (docs/decisions.md Catalog), the refund body is docs/decisions.md's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createWebhookHarness } from './fixtures/webhook-harness.js';
import { storeWithApp } from './helpers/actors.js';
import { startReceiver, verifySignature, type Receiver } from './fixtures/webhook-receiver.js';
import { runDeliveries, subscribe } from './fixtures/webhook-setup.js';
import { address, uniq } from './helpers/orders.js';
import { EVENT_TOPICS } from '../src/webhooks/topics.js';

let h: Harness;
let rx: Receiver;
let s: Awaited<ReturnType<typeof storeWithApp>>;
const secrets = new Map<string, string>();
/** Every body received, by topic: the test deliveries' samples are compared with them at the end. */
const realBodies = new Map<string, any[]>();

const SCOPES = ['read_shop', 'read_products', 'write_products', 'read_orders', 'write_orders', 'read_customers', 'write_customers'];
/** The topics whose body is a store resource (the subscription topics carry the processor's facts). */
const RESOURCE_TOPICS = EVENT_TOPICS.filter((t) => !t.startsWith('subscriptions/'));

beforeAll(async () => {
  h = await createWebhookHarness();
  rx = await startReceiver();
  s = await storeWithApp(h, { scopes: SCOPES, tier: 'enterprise' });
  for (const topic of RESOURCE_TOPICS) secrets.set(topic, (await subscribe(h, s.accessToken, topic, `${rx.url}/${topic}`)).secret);
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

interface Delivered {
  topic: string;
  body: any;
}

/** Runs `change`, then delivers what it emitted; returns the bodies received, checked as a receiver would. */
async function deliveredBy(change: () => Promise<void>): Promise<Delivered[]> {
  const from = rx.received.length;
  await change();
  for (let i = 0; i < 5; i++) {
    await runDeliveries(h);
    const { rows } = await h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE store_id = $1 AND status IN ('pending', 'retrying')", [s.merchant.storeId],
    );
    const { rows: ev } = await h.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM events WHERE store_id = $1 AND fanned_out_at IS NULL', [s.merchant.storeId],
    );
    if (rows[0].n === 0 && ev[0].n === 0) break;
  }
  return rx.received.slice(from).map((r) => {
    const topic = String(r.headers['x-svc-topic']);
    expect(r.path).toBe(`/${topic}`);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers['x-svc-shop-domain']).toBe(s.merchant.slug);
    expect(r.headers['x-svc-api-version']).toBe('2026-06');
    expect(r.headers['x-svc-delivery-attempt']).toBe('1');
    expect(verifySignature(r.raw, r.headers['x-svc-hmac-sha256'], secrets.get(topic)!)).toBe(true);
    const body = JSON.parse(r.raw.toString('utf8'));
    realBodies.set(topic, [...(realBodies.get(topic) ?? []), body]);
    return { topic, body };
  });
}

const only = (got: Delivered[], topic: string) => {
  const of = got.filter((d) => d.topic === topic);
  expect(of.map((d) => d.topic), `one ${topic} in ${got.map((d) => d.topic).join(', ')}`).toEqual([topic]);
  return of[0].body;
};

const SNAKE = /^[a-z0-9]+(_[a-z0-9]+)*$/;
/** Every key of every object is snake_case (app-api.md Payload conventions); `except` lists maps keyed by data. */
function expectSnakeCase(value: unknown, path = '$', except: string[] = []): void {
  if (Array.isArray(value)) return value.forEach((v, i) => expectSnakeCase(v, `${path}[${i}]`, except));
  if (value === null || typeof value !== 'object') return;
  if (except.includes(path)) return;
  for (const [k, v] of Object.entries(value)) {
    expect(k, `${path}.${k}`).toMatch(SNAKE);
    expectSnakeCase(v, `${path}.${k}`, except);
  }
}

const get = async (url: string, key: string) => {
  const res = await h.req('GET', url, { token: s.accessToken });
  expect(res.statusCode, res.body).toBe(200);
  return res.json()[key];
};
const getOrder = (id: string) => get(`/api/v1/orders/${id}.json`, 'order');
const getProduct = (id: string | number) => get(`/api/v1/products/${id}.json`, 'product');
const getCustomer = (id: string) => get(`/api/v1/customers/${id}.json`, 'customer');

/** `orders/create`: app-api.md's field list exactly (C8.8), each value the REST order's. */
function orderCreateProjection(order: any) {
  const pick = (o: any, keys: string[]) => (o === null ? null : Object.fromEntries(keys.map((k) => [k, o[k]])));
  return {
    ...pick(order, ['id', 'name', 'order_number', 'email', 'phone', 'financial_status', 'fulfillment_status', 'currency', 'total_price', 'subtotal_price', 'shipping_price', 'created_at']),
    customer: pick(order.customer, ['id', 'first_name', 'last_name', 'email']),
    shipping_address: pick(order.shipping_address, ['address1', 'address2', 'city', 'province', 'country', 'zip', 'phone']),
    line_items: order.line_items.map((l: any) => pick(l, ['id', 'product_id', 'variant_id', 'title', 'quantity', 'price', 'sku'])),
    shipping_lines: order.shipping_lines.map((l: any) => pick(l, ['title', 'code', 'source', 'price', 'currency'])),
  };
}

const merchant = (method: string, url: string, body?: unknown) => h.req(method, url, { token: s.merchant.token, body });
const api = (method: string, url: string, body?: unknown) => h.req(method, url, { token: s.accessToken, body });
const ok = async (p: Promise<any>, status = 200) => {
  const res = await p;
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
};

describe('app-api.md Payload conventions, C8.8: each webhook body is the REST resource', () => {
  it('products/create, products/update, inventory_levels/update, products/delete: the product object as GET returns it', async () => {
    // App API create, without variants.
    let created: any;
    let got = await deliveredBy(async () => {
      created = (await ok(api('POST', '/api/v1/products.json', { product: { title: `Mug ${uniq()}`, price: '12.50', inventory_quantity: 7, sku: `MUG-${uniq()}`, tags: ['a'] } }), 201)).product;
    });
    let body = only(got, 'products/create');
    expect(body).toEqual(await getProduct(created.id));
    expectSnakeCase(body);
    expect(got.map((d) => d.topic)).toEqual(['products/create']);

    // Merchant create with variants.
    got = await deliveredBy(async () => {
      await ok(merchant('POST', '/products', {
        title: `Shirt ${uniq()}`, category: 'Apparel', images: ['https://cdn.example.com/a.png'],
        variants: [{ name: 'Size', value: 'S', price: 20, discountPrice: 15, stock: 3, skuId: `S-${uniq()}` }, { name: 'Size', value: 'M', price: 20, stock: 0 }],
      }), 201);
    });
    body = only(got, 'products/create');
    expect(body).toEqual(await getProduct(body.id));
    expectSnakeCase(body);
    const shirt = body;

    // App API update with a stock change: products/update and a product-level inventory level.
    got = await deliveredBy(async () => {
      await ok(api('PUT', `/api/v1/products/${created.id}.json`, { product: { title: 'Mug renamed', variants: [{ inventory_quantity: 9 }] } }));
    });
    const product = await getProduct(created.id);
    expect(only(got, 'products/update')).toEqual(product);
    let level = only(got, 'inventory_levels/update');
    expectSnakeCase(level);
    expect(level).toEqual({ product_id: product.id, variant_id: null, sku: product.sku ?? level.sku, available: product.inventory_quantity, updated_at: product.updated_at });

    // Merchant variant update: products/update and the variant's inventory level.
    got = await deliveredBy(async () => {
      await ok(merchant('PATCH', `/variants/update-single-variant/${shirt.variants[0].id}`, { stock: 11 }));
    });
    const shirtNow = await getProduct(shirt.id);
    expect(only(got, 'products/update')).toEqual(shirtNow);
    level = only(got, 'inventory_levels/update');
    const v = shirtNow.variants[0];
    expect(level).toEqual({ product_id: shirtNow.id, variant_id: v.id, sku: v.sku, available: v.inventory_quantity, updated_at: shirtNow.updated_at });

    // Delete: the product as GET returned it just before.
    const before = await getProduct(shirt.id);
    got = await deliveredBy(async () => {
      await ok(api('DELETE', `/api/v1/products/${shirt.id}.json`));
    });
    expect(only(got, 'products/delete')).toEqual(before);
    expect(got.map((d) => d.topic)).toEqual(['products/delete']);
  });

  it('customers/create, customers/update, customers/delete: the customer as GET returns it', async () => {
    let id = '';
    let got = await deliveredBy(async () => {
      id = (await ok(api('POST', '/api/v1/customers.json', { customer: { email: `c-${uniq()}@example.com`, first_name: 'Grace', last_name: 'Hopper', phone: '+15550100', addresses: [address], note: 'vip' } }), 201)).customer.id;
    });
    let body = only(got, 'customers/create');
    expect(body).toEqual(await getCustomer(id));
    expectSnakeCase(body);

    got = await deliveredBy(async () => {
      await ok(api('PUT', `/api/v1/customers/${id}.json`, { customer: { last_name: 'Murray Hopper', accepts_marketing: true } }));
    });
    body = only(got, 'customers/update');
    expect(body).toEqual(await getCustomer(id));

    const before = await getCustomer(id);
    got = await deliveredBy(async () => {
      await ok(api('DELETE', `/api/v1/customers/${id}.json`));
    });
    expect(only(got, 'customers/delete')).toEqual(before);
  });

  it('orders/create (the field list), orders/paid, fulfillments/*, orders/updated, orders/fulfilled: the order as GET returns it', async () => {
    const p = (await ok(api('POST', '/api/v1/products.json', { product: { title: `Lamp ${uniq()}`, price: '30.00', inventory_quantity: 50, sku: `L-${uniq()}` } }), 201)).product;
    await deliveredBy(async () => {});
    const email = `o-${uniq()}@example.com`;
    let orderId = '';
    let got = await deliveredBy(async () => {
      orderId = (await ok(merchant('POST', '/orders', {
        customer: { email, first_name: 'Ada', last_name: 'Lovelace', phone: '+15550101' },
        line_items: [{ product_id: p.product_id, quantity: 3 }],
        shipping_address: address,
        shipping_line: { title: 'Standard', code: 'std', source: null, price: '4.99' },
        tax_rate: 0.1,
        paymentMethod: 'card',
        note: 'leave at door',
        tags: ['gift'],
      }), 201)).data.orderId;
    });
    const order = await getOrder(orderId);
    // The order's new customer: customers/create, the customer as it was made (before the order).
    expect(got.map((d) => d.topic).sort()).toEqual(['customers/create', 'orders/create', 'orders/paid']);
    const created = only(got, 'orders/create');
    expectSnakeCase(created);
    expect(created).not.toHaveProperty('storeId');
    expect(created).toEqual(orderCreateProjection(order));
    const paid = only(got, 'orders/paid');
    expectSnakeCase(paid, '$', ['$.metafields']);
    expect(paid).toEqual(order);

    // A partial fulfillment: fulfillments/create is the API's fulfillment; orders/updated the order.
    let fulfillment: any;
    got = await deliveredBy(async () => {
      fulfillment = (await ok(api('POST', `/api/v1/orders/${orderId}/fulfillments.json`, {
        fulfillment: { status: 'success', tracking_number: 'TN1', tracking_company: 'UPS', line_items: [{ id: order.line_items[0].id, quantity: 1 }] },
      }), 201)).data.fulfillment;
    });
    expect(only(got, 'fulfillments/create')).toEqual(fulfillment);
    expect(only(got, 'orders/updated')).toEqual(await getOrder(orderId));
    expect(got.map((d) => d.topic).sort()).toEqual(['fulfillments/create', 'orders/updated']);

    // Its update, then the rest: orders/fulfilled.
    got = await deliveredBy(async () => {
      fulfillment = (await ok(api('PUT', `/api/v1/fulfillments/${fulfillment.fulfillmentId}.json`, { fulfillment: { tracking_url: 'https://track.example.com/TN1' } }))).data.fulfillment;
    });
    expect(only(got, 'fulfillments/update')).toEqual(fulfillment);
    got = await deliveredBy(async () => {
      fulfillment = (await ok(api('POST', `/api/v1/orders/${orderId}/fulfillments.json`, { fulfillment: { status: 'success' } }), 201)).data.fulfillment;
    });
    const fulfilled = await getOrder(orderId);
    expect(fulfilled.fulfillment_status).toBe('fulfilled');
    expect(only(got, 'fulfillments/create')).toEqual(fulfillment);
    expect(only(got, 'orders/updated')).toEqual(fulfilled);
    expect(only(got, 'orders/fulfilled')).toEqual(fulfilled);
  });

  it('refunds/create, orders/updated, orders/cancelled on a full refund; orders/cancelled on a cancel', async () => {
    const p = (await ok(api('POST', '/api/v1/products.json', { product: { title: `Pen ${uniq()}`, price: '2.25', inventory_quantity: 50 } }), 201)).product;
    const take = async (paymentMethod: string) => (await ok(merchant('POST', '/orders', {
      customer: { email: `r-${uniq()}@example.com`, first_name: 'Ada', last_name: 'Lovelace' },
      line_items: [{ product_id: p.product_id, quantity: 2 }], shipping_address: address, paymentMethod,
    }), 201)).data.orderId as string;
    const orderId = await take('card');
    await deliveredBy(async () => {});
    const before = await getOrder(orderId);

    const got = await deliveredBy(async () => {
      await ok(merchant('POST', `/orders/${orderId}/refund`, { reason: 'damaged', restock: true }));
    });
    const order = await getOrder(orderId);
    expect(got.map((d) => d.topic).sort()).toEqual(['orders/cancelled', 'orders/updated', 'refunds/create']);
    expect(only(got, 'orders/updated')).toEqual(order);
    expect(only(got, 'orders/cancelled')).toEqual(order);

    // The refund: docs/decisions.md's body, its transaction the order's refund transaction as GET
    // shows it, its line items the order's line items.
    const refund = only(got, 'refunds/create');
    expectSnakeCase(refund);
    const tx = order.transactions.find((t: any) => t.kind === 'refund');
    expect(Object.keys(refund).sort()).toEqual(['created_at', 'id', 'note', 'order_id', 'processed_at', 'refund_line_items', 'restock', 'transactions']);
    expect(refund.order_id).toBe(orderId);
    expect(refund.transactions).toEqual([{ ...tx, order_id: orderId, currency: order.currency }]);
    expect(refund.refund_line_items).toEqual(order.line_items.map((l: any) => ({
      id: expect.any(String), line_item_id: l.id, quantity: l.quantity, restock_type: 'cancel', subtotal: l.final_line_price, line_item: before.line_items.find((b: any) => b.id === l.id),
    })));

    const other = await take('cod');
    await deliveredBy(async () => {});
    const cancelled = await deliveredBy(async () => {
      await ok(merchant('POST', `/orders/${other}/cancel`, { reason: 'customer' }));
    });
    const o2 = await getOrder(other);
    expect(cancelled.map((d) => d.topic).sort()).toEqual(['orders/cancelled', 'orders/updated']);
    expect(only(cancelled, 'orders/updated')).toEqual(o2);
    expect(only(cancelled, 'orders/cancelled')).toEqual(o2);
  });

  it('merchant product update with variants: products/update and one inventory level per variant moved', async () => {
    let id = 0;
    await deliveredBy(async () => {
      const data = (await ok(merchant('POST', '/products', {
        title: `Cap ${uniq()}`, price: 9,
        variants: [{ name: 'Colour', value: 'Red', price: 9, stock: 2, skuId: `R-${uniq()}` }, { name: 'Colour', value: 'Blue', price: 9, stock: 4 }],
      }), 201)).data;
      id = data.id;
    });
    const before = await getProduct(id);
    const got = await deliveredBy(async () => {
      await ok(merchant('PUT', `/products/${before.product_id}`, {
        title: 'Cap v2', images: ['https://cdn.example.com/cap.png'],
        variants: [{ varientId: before.variants[0].id, stock: 5 }, { varientId: before.variants[1].id, discountPrice: 7 }, { name: 'Colour', value: 'Green', price: 10, stock: 1 }],
      }));
    });
    const after = await getProduct(id);
    expect(only(got, 'products/update')).toEqual(after);
    const v = after.variants[0];
    expect(only(got, 'inventory_levels/update')).toEqual({ product_id: after.id, variant_id: v.id, sku: v.sku, available: v.inventory_quantity, updated_at: after.updated_at });
  });

  it('a new customer made by an order: customers/create has the REST shape of the customer', async () => {
    const p = (await ok(api('POST', '/api/v1/products.json', { product: { title: `Cup ${uniq()}`, price: '3.00', inventory_quantity: 50 } }), 201)).product;
    await deliveredBy(async () => {});
    let orderId = '';
    const got = await deliveredBy(async () => {
      orderId = (await ok(merchant('POST', '/orders', {
        customer: { email: `n-${uniq()}@example.com`, first_name: 'Ada', last_name: 'Lovelace', phone: '+15550101' },
        line_items: [{ product_id: p.product_id, quantity: 1 }], shipping_address: address, paymentMethod: 'cod',
      }), 201)).data.orderId;
    });
    const order = await getOrder(orderId);
    const body = only(got, 'customers/create');
    const customer = await getCustomer(order.customer.id);
    expect(Object.keys(body).sort()).toEqual(Object.keys(customer).sort());
    // The customer as it was made; `orders_count` and `total_spent` are figures of the moment the
    // event was written, before its first order was (a judgement call, see the report): not pinned.
    expectSnakeCase(body);
    expect({ ...body, orders_count: 0, total_spent: '0.00' }).toEqual({ ...customer, orders_count: 0, total_spent: '0.00' });
    expect(typeof body.orders_count).toBe('number');
    expect(body.total_spent).toMatch(/^\d+\.\d{2}$/);
  });

  it('merchant order updates: orders/updated and orders/paid carry the order as GET returns it', async () => {
    const p = (await ok(api('POST', '/api/v1/products.json', { product: { title: `Bowl ${uniq()}`, price: '8.00', inventory_quantity: 50 } }), 201)).product;
    const q = (await ok(api('POST', '/api/v1/products.json', { product: { title: `Plate ${uniq()}`, price: '5.00', inventory_quantity: 50 } }), 201)).product;
    await deliveredBy(async () => {});
    const orderId = (await ok(merchant('POST', '/orders', {
      customer: { email: `u-${uniq()}@example.com`, first_name: 'Ada', last_name: 'Lovelace' },
      line_items: [{ product_id: p.product_id, quantity: 1 }], shipping_address: address, paymentMethod: 'cod',
    }), 201)).data.orderId as string;
    await deliveredBy(async () => {});

    let got = await deliveredBy(async () => {
      await ok(merchant('PUT', `/orders/update/${orderId}`, { status: 'confirmed', notes: 'call first', courierName: 'DHL', trackingNumber: 'T-9' }));
    });
    expect(got.map((d) => d.topic)).toEqual(['orders/updated']);
    expect(only(got, 'orders/updated')).toEqual(await getOrder(orderId));

    got = await deliveredBy(async () => {
      await ok(merchant('PATCH', `/orders/update-signle-order/${orderId}`, { products: [{ productId: q.product_id, quantity: 2 }], paymentMethod: 'cash' }));
    });
    const order = await getOrder(orderId);
    expect(order.financial_status).toBe('paid');
    expect(got.map((d) => d.topic).sort()).toEqual(['orders/paid', 'orders/updated']);
    expect(only(got, 'orders/updated')).toEqual(order);
    expect(only(got, 'orders/paid')).toEqual(order);

    // A point-of-sale refund: refunds/create alone, restock_type return.
    got = await deliveredBy(async () => {
      await ok(merchant('POST', `/orders/${orderId}/refund`, { pos: true, restock: true }));
    });
    expect(got.map((d) => d.topic)).toEqual(['refunds/create']);
    const refunded = await getOrder(orderId);
    const refund = only(got, 'refunds/create');
    const tx = refunded.transactions.find((t: any) => t.kind === 'refund');
    expect(refund.transactions).toEqual([{ ...tx, order_id: orderId, currency: refunded.currency }]);
    expect(refund.refund_line_items).toEqual(order.line_items.map((l: any) => ({
      id: expect.any(String), line_item_id: l.id, quantity: l.quantity, restock_type: 'return', subtotal: l.final_line_price, line_item: l,
    })));
  });

  it('a discounted, taxed order of a variant; a fulfillment cancelled; delivered; the customer deleted with orders', async () => {
    const code = `SAVE${uniq()}`;
    expect((await merchant('POST', '/discounts', { code, type: 'Percentage', discountPercentage: 10 })).statusCode).toBe(201);
    let shirt: any;
    await deliveredBy(async () => {
      const data = (await ok(merchant('POST', '/products', {
        title: `Tee ${uniq()}`, variants: [{ name: 'Size', value: 'L', price: 40, discountPrice: 35, stock: 9, skuId: `T-${uniq()}` }],
      }), 201)).data;
      shirt = await getProduct(data.id);
    });
    const plain = (await ok(api('POST', '/api/v1/products.json', { product: { title: `Sock ${uniq()}`, price: '1.99', inventory_quantity: 40 } }), 201)).product;
    await deliveredBy(async () => {});
    const email = `d-${uniq()}@example.com`;
    let orderId = '';
    let got = await deliveredBy(async () => {
      orderId = (await ok(merchant('POST', '/orders', {
        customer: { email, first_name: 'Mary Ann', last_name: 'Evans' },
        line_items: [{ product_id: shirt.product_id, variant_id: shirt.variants[0].id, quantity: 2, properties: { engraving: 'M' } }, { product_id: plain.product_id, quantity: 3 }],
        shipping_address: address, billing_address: { ...address, city: 'Leeds' }, shipping_line: { title: 'Express', code: 'exp', source: null, price: '9.00' },
        discount_code: code.toLowerCase(), tax_rate: 0.2, paymentMethod: 'upi', attributes: [{ name: 'gift', value: 'yes' }],
      }), 201)).data.orderId;
    });
    let order = await getOrder(orderId);
    expect(order.discount_applications).toHaveLength(1);
    const created = only(got, 'orders/create');
    expect(created).toEqual(orderCreateProjection(order));
    // app-api.md Payload conventions: variant_id is the variant's, or the product's id without variants; no digital flag.
    expect(created.line_items.map((l: any) => l.variant_id)).toEqual([shirt.variants[0].id, plain.id]);
    expect(JSON.stringify(created)).not.toMatch(/digital/i);
    expect(only(got, 'orders/paid')).toEqual(order);

    let f: any;
    got = await deliveredBy(async () => {
      f = (await ok(api('POST', `/api/v1/orders/${orderId}/fulfillments.json`, { fulfillment: { status: 'success' } }), 201)).data.fulfillment;
    });
    order = await getOrder(orderId);
    expect(got.map((d) => d.topic).sort()).toEqual(['fulfillments/create', 'orders/fulfilled', 'orders/updated']);
    expect(only(got, 'orders/fulfilled')).toEqual(order);
    got = await deliveredBy(async () => {
      f = (await ok(api('PUT', `/api/v1/fulfillments/${f.fulfillmentId}.json`, { fulfillment: { status: 'cancelled' } }))).data.fulfillment;
    });
    order = await getOrder(orderId);
    expect(order.fulfillment_status).toBe('unfulfilled');
    expect(only(got, 'fulfillments/update')).toEqual(f);
    expect(only(got, 'orders/updated')).toEqual(order);

    got = await deliveredBy(async () => {
      await ok(merchant('PUT', `/orders/update/${orderId}`, { status: 'delivered', deliveryDate: '2026-01-02T03:04:05.000Z', city: 'York', pinCode: 'Y1' }));
    });
    expect(only(got, 'orders/updated')).toEqual(await getOrder(orderId));

    const customerId = order.customer.id;
    const before = await getCustomer(customerId);
    expect(before.orders_count).toBe(1);
    got = await deliveredBy(async () => {
      await ok(api('DELETE', `/api/v1/customers/${customerId}.json`));
    });
    expect(got.map((d) => d.topic)).toEqual(['customers/delete']);
    expect(only(got, 'customers/delete')).toEqual(before);
  });

  it('test deliveries (issue 14): each topic\'s sample has the shape of the real bodies received above', async () => {
    /** Keys and JSON types, recursively; null matches any type (a nullable field), an empty array any array. */
    const sameShape = (real: unknown, sample: unknown, path: string): void => {
      if (real === null || sample === null) return;
      if (Array.isArray(real) || Array.isArray(sample)) {
        expect(Array.isArray(real) && Array.isArray(sample), path).toBe(true);
        const [r0, s0] = [(real as unknown[])[0], (sample as unknown[])[0]];
        if (r0 !== undefined && s0 !== undefined) sameShape(r0, s0, `${path}[0]`);
        return;
      }
      expect(typeof sample, path).toBe(typeof real);
      if (typeof real !== 'object') return;
      // Maps keyed by data (metafields by namespace, line item properties) are not shapes.
      if (path.endsWith('.metafields')) return;
      expect(Object.keys(sample as object).sort(), path).toEqual(Object.keys(real as object).sort());
      for (const k of Object.keys(real as object)) sameShape((real as any)[k], (sample as any)[k], `${path}.${k}`);
    };
    const topics = RESOURCE_TOPICS.filter((t) => realBodies.has(t));
    // Every resource topic some operation emits was received (orders/delete has no operation).
    expect(RESOURCE_TOPICS.filter((t) => !realBodies.has(t))).toEqual(['orders/delete']);
    for (const topic of topics) {
      const res = await h.req('POST', `/apps/developer/${s.app.appId}/webhooks/test`, { token: s.partner.token, body: { topic, address: `${rx.url}/sample/${topic}` } });
      expect(res.statusCode, res.body).toBe(200);
      const sample = JSON.parse(rx.received.filter((r) => r.path === `/sample/${topic}`).at(-1)!.raw.toString('utf8'));
      for (const real of realBodies.get(topic)!) sameShape(real, sample, topic);
    }
  });
});
