// An order taken for a customer's email while that customer is deleted (C7.1, the App API's
// DELETE /customers): the order either links the customer and is unlinked by the delete, as every
// order of a deleted customer is, or finds no customer and makes a new one. Never a 500: the
// lookup holds the customer row (FOR KEY SHARE) so the order's foreign key cannot meet a deleted row.
// Real parallel requests; on PGlite transactions run one at a time, so the race only shows on PostgreSQL.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { insertProduct, orderBody, orderStore, uniq } from './helpers/orders.js';

let h: Harness;
beforeAll(async () => { h = await createHarness({}, { limiter: unlimitedLimiter() }); });
afterAll(() => h?.close());

it('an order for a customer deleted at the same moment is 201 and ends linked to a customer that exists, or to none', async () => {
  const s = await orderStore(h, ['read_orders', 'write_orders', 'read_customers', 'write_customers']);
  const p = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 100000 });
  const failures: string[] = [];
  for (let i = 0; i < 25; i++) {
    const email = `race-${uniq()}@example.com`;
    const c = await h.req('POST', '/api/v1/customers.json', { token: s.accessToken, body: { customer: { email } } });
    expect(c.statusCode).toBe(201);
    const deletedId = c.json().customer.id;
    const [order, del] = await Promise.all([
      h.req('POST', '/orders', { token: s.merchant.token, body: orderBody(p, { customer: { email } }) }),
      h.req('DELETE', `/api/v1/customers/${deletedId}.json`, { token: s.accessToken }),
    ]);
    if (order.statusCode !== 201 || del.statusCode !== 200) failures.push(`round ${i}: order ${order.statusCode} ${order.body.slice(0, 200)}; delete ${del.statusCode}`);
    if (order.statusCode !== 201) continue;
    const { rows } = await h.db.query<{ customer_id: string | null; exists: boolean }>(
      'SELECT o.customer_id, EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id) AS exists FROM orders o WHERE o.id = $1',
      [order.json().data.orderId],
    );
    // Linked to the deleted customer would be a dangling link; a live customer (the new one) or none is right.
    if (rows[0].customer_id !== null && !rows[0].exists) failures.push(`round ${i}: order links a customer that does not exist`);
    if (rows[0].customer_id === deletedId) failures.push(`round ${i}: order still links the deleted customer`);
  }
  expect(failures).toEqual([]);
}, 120_000);
