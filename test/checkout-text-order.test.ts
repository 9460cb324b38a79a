// The order of text the checkout shows (C15.2, C15.3) is the order of its bytes, whatever the
// database's collation (src/checkout/text-order.ts). On PostgreSQL this file runs on a database of
// its own whose default collation is linguistic (ICU en-US with alternate=shifted, which ignores
// `-` at first, as glibc's en_US.UTF-8 does): there `p-c` sorts after `pb`, in bytes before it.
// PGlite has no linguistic collation (its ICU orders by code point), so there the SQL itself is
// checked: every statement that orders the shipping apps says `COLLATE "C"`.
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls, insertSimpleZone } from './helpers/checkout.js';
import { createTestApp, installApp, signupPartner } from './helpers/actors.js';
import { startReceiver, type Receiver } from './fixtures/webhook-receiver.js';
import { privateDatabase } from './fixtures/webhook-harness.js';
import { address, insertProduct, orderStore, uniq } from './helpers/orders.js';
import { openPostgres } from '../src/db/postgres.js';
import { shippingAppsOf } from '../src/checkout/app-rates.js';
import { byBytes } from '../src/checkout/text-order.js';
import type { QueryOptions } from '../src/db/db.js';

/** On PostgreSQL, a database of this file's own with a linguistic default collation. */
const linguisticDatabase = () =>
  privateDatabase({ prefix: 'coll', createOptions: "TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US-u-ka-shifted' LOCALE 'C.UTF-8'" });

let h: Harness;
const receivers: Receiver[] = [];
beforeAll(async () => {
  const own = await linguisticDatabase();
  h = await createHarness({}, own ? { db: await openPostgres(own.url, { max: 5 }), afterClose: own.drop } : {});
}, 60_000);
afterAll(async () => {
  await Promise.all(receivers.map((rx) => rx.close()));
  await h?.close();
});

const { create, rates } = checkoutCalls(() => h);

/** A real shipping app answering one USD rate named after its handle. */
async function shippingApp(partnerToken: string, handle: string) {
  const rx = await startReceiver(() => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rates: [{ service_name: handle, service_code: 'std', total_price: '700', currency: 'USD' }] }),
  }));
  receivers.push(rx);
  return createTestApp(h, partnerToken, { handle, scopes: ['write_shipping'], extensions: { shipping: { ratesUrl: `${rx.url}/rates` } } });
}

async function checkoutOf(s: Awaited<ReturnType<typeof orderStore>>) {
  const product = await insertProduct(h, s.merchant.storeId, { price: 1000, stock: 5 });
  const made = await create(s, { email: `b-${uniq()}@example.com`, line_items: [{ product_id: product.id, quantity: 1 }], shipping_address: address });
  expect(made.statusCode, made.body).toBe(201);
  return made.json().data.checkout.token as string;
}

describe('shipping apps come in byte order of their handles, whatever the collation (C15.3; failed before its fix on PostgreSQL)', () => {
  it('app `p-c` is asked and offered before app `pb`, as bytes order them; an en-US collation would put it after', async () => {
    if (inject('testDatabaseUrl')) {
      // The database does order linguistically, so the test means something here.
      const { rows } = await h.db.query<{ o: string }>(`SELECT string_agg(x, ' ' ORDER BY x) AS o FROM (VALUES ('pb'), ('p-c')) v(x)`);
      expect(rows[0].o).toBe('pb p-c');
    }
    const u = `t${uniq()}`;
    const [dash, plain] = [`${u}-c`, `${u}b`];
    expect(byBytes(dash, plain)).toBe(-1);
    const s = await orderStore(h);
    const partner = await signupPartner(h);
    // Installed in the other order, so neither creation nor installation order can pass for it.
    for (const handle of [plain, dash]) await installApp(h, s.merchant, await shippingApp(partner.token, handle));
    const token = await checkoutOf(s);

    // The quote reads the store's set (checkout_store_config).
    const listed = await rates(s, token);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().data.shipping_rates.map((r: { source: string }) => r.source)).toEqual([dash, plain]);
    // The single-purpose read (checkout_shipping_apps) gives the same order.
    expect((await shippingAppsOf(h.deps, s.merchant.storeId)).apps.map((a) => a.handle)).toEqual([dash, plain]);
  });

  it('every statement that orders the shipping apps orders them by bytes (COLLATE "C"): what PGlite can check', async () => {
    const s = await orderStore(h);
    const partner = await signupPartner(h);
    await installApp(h, s.merchant, await shippingApp(partner.token, `t${uniq()}`));
    const token = await checkoutOf(s);
    const seen = new Map<string, string>();
    const original = h.db.query.bind(h.db);
    const spy = vi.spyOn(h.db, 'query').mockImplementation(((sql: string, params?: unknown[], options?: QueryOptions) => {
      if (options?.name) seen.set(options.name, sql);
      return original(sql, params, options);
    }) as typeof h.db.query);
    try {
      expect((await rates(s, token)).statusCode).toBe(200);
      await shippingAppsOf(h.deps, s.merchant.storeId);
    } finally {
      spy.mockRestore();
    }
    for (const name of ['checkout_store_config', 'checkout_shipping_apps']) {
      const sql = seen.get(name);
      expect(sql, name).toBeDefined();
      const orderings = [...sql!.matchAll(/ORDER BY a\.handle(?! COLLATE "C")/g)];
      expect(orderings, `${name}: ${sql}`).toEqual([]);
      expect(sql).toMatch(/ORDER BY a\.handle COLLATE "C"/);
    }
  });
});

describe('zone rates of one price come in byte order of their titles (C15.2; failed before its fix)', () => {
  it('U+FF21 before U+1F600 (UTF-16 code units put the emoji first), `a-c` before `ab`', async () => {
    const s = await orderStore(h);
    const ids = new Map<string, string>();
    for (const name of ['ab', '\u{1F600}', 'a-c', '\uFF21']) ids.set(name, await insertSimpleZone(h, s.merchant.storeId, { name, countries: ['GB'], price: 499 }));
    const token = await checkoutOf(s);
    const listed = await rates(s, token);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().data.shipping_rates.map((r: { title: string }) => r.title)).toEqual(['a-c', 'ab', '\uFF21', '\u{1F600}']);
  });

  it('byBytes is the order of the UTF-8 bytes, for every pair of a sample spanning the planes', () => {
    const sample = ['', 'a', 'A', 'a-c', 'ab', '\u00e9', '\ud7ff', '\ue000', '\uFF21', '\uffff', '\u{10000}', '\u{1F600}', '\u{10FFFF}', 'a\u{1F600}', 'a\uFF21'];
    for (const x of sample) {
      for (const y of sample) {
        const bytes = Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y, 'utf8'));
        expect(byBytes(x, y), `${JSON.stringify(x)} vs ${JSON.stringify(y)}`).toBe(bytes);
      }
    }
  });
});
