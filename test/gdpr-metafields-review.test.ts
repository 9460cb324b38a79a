// Review of the platform's erasure of a redacted customer (C9; issue 6) and of metafields (C6.6):
// each test failed before its fix.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { VALIDATION_TARGET as VALIDATION } from '../src/checkout/checkout-functions.js';
import { checkoutCalls } from './helpers/checkout.js';
import { runsOf as waitForRuns } from './helpers/function-runs.js';
import { storeWithApp } from './helpers/actors.js';
import { address, insertProduct, uniq } from './helpers/orders.js';
import { redactCustomer } from '../src/gdpr/gdpr.redaction.js';
import { uuidv7 } from '../src/ids.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
});
afterAll(() => h?.close());

const onPostgres = !!inject('testDatabaseUrl');
const { create, change } = checkoutCalls(() => h);
type Store = Awaited<ReturnType<typeof storeWithApp>>;

const redact = (storeId: string, target: { customerId?: string; customerEmail?: string }) =>
  h.db.transaction((tx) => redactCustomer(tx, { storeId, customerId: target.customerId ?? null, customerEmail: target.customerEmail ?? null, orderIds: [] }, new Date()));

// =============================================================================================

/** A store whose validation function quotes the checkout's email in its error (so in its output and the checkout's results). */
const quotingStore = () => storeWithApp(h, {
  scopes: ['read_products'], tier: 'enterprise',
  extensions: { functions: [{ handle: 'quote', target: VALIDATION, expression: '{"operations": [{"validationAdd": {"errors": [{"message": "Receipt to " + input.checkout.email, "target": "cart"}]}}]}' }] },
});

/** Every run of the app as stored: the input inline or shared (migration 0017), oldest first. */
async function storedRuns(s: Store) {
  const { rows } = await h.db.query<{ input: unknown; input_id: string | null; output: unknown; error_message: string | null; checkout_token_enc: string | null }>(
    `SELECT coalesce(r.input, i.input) AS input, r.input_id, r.output, r.error_message, r.checkout_token_enc
       FROM function_runs r LEFT JOIN function_run_inputs i ON i.id = r.input_id WHERE r.app_id = $1 ORDER BY r.created_at, r.id`,
    [s.app.appId],
  );
  return rows;
}

async function checkoutStarted(s: Store, email: string) {
  const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 10 });
  const res = await create(s, { email, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address });
  expect(res.statusCode, res.body).toBe(201);
  // The storefront's view has no id; the store has this one checkout.
  const { rows } = await h.db.query<{ id: string }>('SELECT id FROM checkouts WHERE store_id = $1', [s.merchant.storeId]);
  return { id: rows[0].id, token: res.json().data.checkout.token as string };
}

describe('C9, C11.5 the erasure finds the runs by the email they hold', () => {
  it("runs recorded before the buyer changed the checkout's email are erased (any case); later runs and other stores' stay", async () => {
    const s = await quotingStore();
    const other = await quotingStore();
    const a = `ada-${uniq()}@example.com`;
    const b = `bea-${uniq()}@example.com`;
    const c = await checkoutStarted(s, a);
    await waitForRuns(h, s, 1);
    const changed = await change(s, c.token, { email: b });
    expect(changed.statusCode, changed.body).toBe(200);
    await waitForRuns(h, s, 2);
    await checkoutStarted(other, a);
    await waitForRuns(h, other, 1);
    const before = await storedRuns(s);
    expect(JSON.stringify(before[0])).toContain(a);
    const sharedInput = before[0].input_id;
    expect(sharedInput).toEqual(expect.any(String));

    // The checkout's email is b now: only the runs still hold a. Emails match in any case.
    await redact(s.merchant.storeId, { customerEmail: a.toUpperCase() });

    const after = await storedRuns(s);
    expect(after[0]).toEqual({ input: null, input_id: null, output: null, error_message: null, checkout_token_enc: null });
    expect((await h.db.query('SELECT id FROM function_run_inputs WHERE id = $1', [sharedInput])).rows).toEqual([]);
    // The run made with b is not the redacted customer's.
    expect(JSON.stringify(after[1].input)).toContain(b);
    expect(JSON.stringify(after[1].output)).toContain(b);
    // The checkout is b's: untouched.
    const row = (await h.db.query<{ email: string }>('SELECT email FROM checkouts WHERE id = $1', [c.id])).rows[0];
    expect(row.email).toBe(b);
    // Another store's run with the same email is that store's business.
    expect(JSON.stringify(await storedRuns(other))).toContain(a);
  });

  it("a checkout's function results that quote the email lose it; the results themselves stay", async () => {
    const s = await quotingStore();
    const a = `cy-${uniq()}@example.com`;
    const c = await checkoutStarted(s, a);
    const stored = async () => (await h.db.query<{ email: string | null; function_results: any }>('SELECT email, function_results FROM checkouts WHERE id = $1', [c.id])).rows[0];
    expect((await stored()).function_results.validationErrors).toEqual([expect.objectContaining({ message: `Receipt to ${a}` })]);

    await redact(s.merchant.storeId, { customerEmail: a });

    const after = await stored();
    expect(after.email).toBeNull();
    expect(JSON.stringify(after.function_results)).not.toContain(a);
    expect(after.function_results.validationErrors).toEqual([expect.objectContaining({ message: 'Receipt to [redacted]', target: 'cart' })]);
  });
});

// =============================================================================================

const METAFIELD_SCOPES = ['read_metafields', 'write_metafields', 'read_customers', 'write_customers', 'read_products', 'write_products'];

async function insertCustomer(storeId: string) {
  const id = uuidv7();
  await h.db.query('INSERT INTO customers (id, store_id, email, created_at, updated_at) VALUES ($1, $2, $3, now(), now())', [id, storeId, `${id}@example.com`]);
  return { id, email: `${id}@example.com` };
}

const bulk = (token: string, metafields: object[]) => h.req('POST', '/api/v1/metafields/bulk.json', { token, body: { metafields } });
const item = (ownerType: string, ownerId: string, key: string, value: string) => ({ ownerType, ownerId, namespace: 'custom', key, type: 'single_line_text_field', value });

const metafieldsOf = async (ownerId: string) =>
  (await h.db.query<{ key: string }>('SELECT key FROM metafields WHERE owner_id = $1 ORDER BY key', [ownerId])).rows.map((r) => r.key);

describe("C9 customers/redact erases the customer's metafields", () => {
  it("the redacted customer's metafields are deleted with the rest; another customer's and the products' stay", async () => {
    const s = await storeWithApp(h, { scopes: METAFIELD_SCOPES });
    const c = await insertCustomer(s.merchant.storeId);
    const other = await insertCustomer(s.merchant.storeId);
    const product = await insertProduct(h, s.merchant.storeId);
    const res = await bulk(s.accessToken, [
      item('customer', c.id, 'birthday', '1815-12-10'), item('customer', c.id, 'nickname', 'Ada'),
      item('customer', other.id, 'nickname', 'Bea'), item('product', product.id, 'material', 'Linen'),
    ]);
    expect(res.statusCode, res.body).toBe(200);

    await redact(s.merchant.storeId, { customerEmail: c.email });

    expect(await metafieldsOf(c.id)).toEqual([]);
    expect(await metafieldsOf(other.id)).toEqual(['nickname']);
    expect(await metafieldsOf(product.id)).toEqual(['material']);
  });
});

// =============================================================================================

/** Metafields whose owner of that type is gone (none must ever be). */
async function orphans(storeId: string): Promise<number> {
  const { rows } = await h.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM metafields m WHERE m.store_id = $1 AND (
       (m.owner_type = 'customer' AND NOT EXISTS (SELECT 1 FROM customers c WHERE c.id::text = m.owner_id))
       OR (m.owner_type = 'product' AND NOT EXISTS (SELECT 1 FROM products p WHERE p.id::text = m.owner_id))
       OR (m.owner_type = 'variant' AND NOT EXISTS (SELECT 1 FROM variants v WHERE v.id::text = m.owner_id)))`,
    [storeId],
  );
  return rows[0].n;
}

// Real parallel requests: on PostgreSQL the bulk write and the delete run in parallel transactions
// (PGlite runs one at a time, which proves nothing about locking).
describe.runIf(onPostgres)('C6.6 a metafield bulk write racing its owner\'s deletion (PostgreSQL)', () => {
  const ROUNDS = 8;
  const PAIRS = 5;

  it('bulk writes for customers deleted at the same time leave no metafield of a deleted customer', async () => {
    const s = await storeWithApp(h, { scopes: METAFIELD_SCOPES });
    for (let round = 0; round < ROUNDS; round++) {
      const customers = await Promise.all(Array.from({ length: PAIRS }, () => insertCustomer(s.merchant.storeId)));
      const results = await Promise.all(customers.flatMap((c) => [
        bulk(s.accessToken, [item('customer', c.id, 'nickname', 'Ada'), item('customer', c.id, 'birthday', '1815-12-10')]),
        h.req('DELETE', `/api/v1/customers/${c.id}.json`, { token: s.accessToken }),
      ]));
      for (const [i, r] of results.entries()) {
        // The bulk write is a 200 (before the delete) or the 400 of an owner not of the store (after it).
        expect(i % 2 ? [200] : [200, 400], r.body).toContain(r.statusCode);
      }
      expect(await orphans(s.merchant.storeId), `round ${round}`).toBe(0);
    }
  });

  it('bulk writes for variants whose product is deleted at the same time leave no metafield of a deleted variant', async () => {
    const s = await storeWithApp(h, { scopes: METAFIELD_SCOPES });
    for (let round = 0; round < ROUNDS; round++) {
      const products = await Promise.all(Array.from({ length: PAIRS }, () =>
        insertProduct(h, s.merchant.storeId, { variants: [{ value: 'S', price: 1000, stock: 5 }, { value: 'M', price: 1000, stock: 5 }] })));
      const results = await Promise.all(products.flatMap((p) => [
        // Variants alone: the product's deletion deletes them (a cascade), under the product's lock only.
        bulk(s.accessToken, [item('variant', p.variants[1].id, 'fit', 'Slim'), item('variant', p.variants[0].id, 'fit', 'Loose')]),
        h.req('DELETE', `/api/v1/products/${p.id}.json`, { token: s.accessToken }),
      ]));
      for (const [i, r] of results.entries()) expect(i % 2 ? [200] : [200, 400], r.body).toContain(r.statusCode);
      expect(await orphans(s.merchant.storeId), `round ${round}`).toBe(0);
    }
  });
});
