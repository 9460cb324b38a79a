// The order area's part of the demo store (C1.5): orders in every merchant status, with their
// transactions, fulfillments and a refund, and a week of storefront traffic for the analytics.
// Runs after the store's products, customers and first three orders (demo-store.ts).
import type { Tx } from '../db/db.js';
import { uuidv7 } from '../ids.js';

const DAY = 86_400_000;

interface DemoLine {
  product: string;
  variant: string | null;
  title: string;
  variantTitle: string | null;
  qty: number;
  price: number;
  fulfilled?: number;
}

interface DemoOrder {
  status: string;
  financial: string;
  fulfillment: string;
  payment: string;
  customer: { id: string | null; email: string | null; first: string; last: string; city: string; province: string };
  lines: DemoLine[];
  daysAgo: number;
  fulfillments?: { status: string; tracking: string; lines: 'all' | { line: number; qty: number }[] }[];
  taxRate?: string;
  discount?: { code: string; percentBp: number };
  note?: string;
}

export async function insertDemoOrderData(tx: Tx, storeId: string, now: Date): Promise<void> {
  const at = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY);
  const { rows: products } = await tx.query<{ id: string; handle: string }>('SELECT id, handle FROM products WHERE store_id = $1', [storeId]);
  const p = new Map(products.map((r) => [r.handle, r.id]));
  const tee = p.get('classic-tee')!;
  const tote = p.get('canvas-tote')!;
  const { rows: variants } = await tx.query<{ id: string; value: string }>('SELECT id, value FROM variants WHERE product_id = $1 ORDER BY position', [tee]);
  const size = new Map(variants.map((v) => [v.value, v.id]));
  // Walk-in and phone orders taken without an email, so they have no customer record (the demo's
  // two customers keep the order history their own tests describe).
  const walkIn = { id: null, email: null, first: 'Katherine', last: 'Johnson', city: 'Hampton', province: 'VA' };
  const phone = { id: null, email: null, first: 'Alan', last: 'Turing', city: 'Boston', province: 'MA' };

  // The first three orders (demo-store.ts): the money and shipments behind their states.
  const { rows: first } = await tx.query<{ id: string; order_number: number; total_minor: number; created_at: Date; payment_method: string }>(
    'SELECT id, order_number, total_minor, created_at, payment_method FROM orders WHERE store_id = $1 ORDER BY order_number', [storeId]);
  for (const o of first) {
    if (o.order_number === 1002) continue; // pending, cash on delivery
    await tx.query('UPDATE orders SET paid_minor = total_minor WHERE id = $1', [o.id]);
    await sale(tx, storeId, o.id, o.total_minor, o.payment_method, o.created_at);
    if (o.order_number === 1001) {
      await tx.query('UPDATE order_line_items SET fulfilled_quantity = quantity WHERE order_id = $1', [o.id]);
      await tx.query("UPDATE orders SET tracking_number = '1Z999AA10123456784', tracking_url = 'https://www.ups.com/track?tracknum=1Z999AA10123456784', courier_name = 'UPS' WHERE id = $1", [o.id]);
      const { rows: lines } = await tx.query<{ id: string; quantity: number }>('SELECT id, quantity FROM order_line_items WHERE order_id = $1', [o.id]);
      await fulfillment(tx, storeId, o.id, 'success', '1Z999AA10123456784', [], lines, new Date(o.created_at.getTime() + DAY));
    }
    if (o.order_number === 1003) {
      const refundAt = new Date(o.created_at.getTime() + DAY);
      const txId = uuidv7(refundAt.getTime());
      await tx.query(
        `INSERT INTO order_transactions (id, order_id, store_id, kind, status, gateway, amount_minor, created_at) VALUES ($1,$2,$3,'refund','success',$4,$5,$6)`,
        [txId, o.id, storeId, o.payment_method, o.total_minor, refundAt]);
      await tx.query(
        `INSERT INTO refunds (id, order_id, store_id, reason, pos, restock, amount_minor, transaction_id, created_at) VALUES ($1,$2,$3,'customer',false,true,$4,$5,$6)`,
        [uuidv7(refundAt.getTime()), o.id, storeId, o.total_minor, txId, refundAt]);
    }
  }

  const teeLine = (s: string, qty: number, fulfilled = 0): DemoLine => ({ product: tee, variant: size.get(s)!, title: 'Classic Tee', variantTitle: `Size / ${s}`, qty, price: 2500, fulfilled });
  const toteLine = (qty: number, fulfilled = 0): DemoLine => ({ product: tote, variant: null, title: 'Canvas Tote', variantTitle: null, qty, price: 1800, fulfilled });
  const orders: DemoOrder[] = [
    { status: 'confirmed', financial: 'pending', fulfillment: 'unfulfilled', payment: 'bank_transfer', customer: phone, lines: [teeLine('L', 1)], daysAgo: 1, note: 'Invoice sent' },
    { status: 'paid', financial: 'paid', fulfillment: 'unfulfilled', payment: 'card', customer: walkIn, lines: [toteLine(2)], daysAgo: 1, taxRate: '0.08875' },
    {
      status: 'partial', financial: 'paid', fulfillment: 'partial', payment: 'upi', customer: phone, lines: [teeLine('S', 1, 1), toteLine(1)], daysAgo: 4,
      fulfillments: [{ status: 'success', tracking: '9400111899223197428490', lines: [{ line: 0, qty: 1 }] }],
    },
    {
      status: 'delivered', financial: 'paid', fulfillment: 'fulfilled', payment: 'card', customer: walkIn, lines: [teeLine('M', 1, 1)], daysAgo: 8,
      fulfillments: [{ status: 'delivered', tracking: '1Z999AA10123456785', lines: 'all' }],
    },
    {
      status: 'returned', financial: 'paid', fulfillment: 'fulfilled', payment: 'wallet', customer: phone, lines: [toteLine(1, 1)], daysAgo: 6,
      fulfillments: [{ status: 'delivered', tracking: '1Z999AA10123456786', lines: 'all' }],
    },
    {
      status: 'exchange', financial: 'paid', fulfillment: 'fulfilled', payment: 'card', customer: walkIn, lines: [teeLine('S', 1, 1)], daysAgo: 7,
      fulfillments: [{ status: 'delivered', tracking: '1Z999AA10123456787', lines: 'all' }],
    },
  ];
  const { rows: [store] } = await tx.query<{ n: number }>('SELECT next_order_number AS n FROM stores WHERE id = $1', [storeId]);
  let number = store.n;
  for (const o of orders) await insertOrder(tx, storeId, number++, o, at(o.daysAgo));
  await tx.query('UPDATE stores SET next_order_number = $2 WHERE id = $1', [storeId, number]);

  // A week of storefront traffic: sessions from a few sources, two or three page views each (one
  // statement: the demo is loaded at first start, where every round trip shows).
  const sources = ['google', 'instagram', null, 'newsletter'];
  const events: [string, string, string, string | null, string, string][] = [];
  for (let d = 6; d >= 0; d--) {
    for (let s = 0; s < 3 + (d % 3); s++) {
      const when = at(d).getTime() - s * 3_600_000;
      const session = `demo-${d}-${s}`;
      const source = sources[(d + s) % sources.length];
      events.push([uuidv7(when), 'session', session, source, '/', new Date(when).toISOString()]);
      for (const [k, path] of ['/', '/products/classic-tee', '/products/canvas-tote'].slice(0, 2 + (s % 2)).entries()) {
        events.push([uuidv7(when + k * 60_000), 'page_view', session, source, path, new Date(when + k * 60_000).toISOString()]);
      }
    }
  }
  await tx.query(
    `INSERT INTO storefront_events (id, store_id, type, session_id, source, path, occurred_at, created_at)
     SELECT (e->>0)::uuid, $1, e->>1, e->>2, e->>3, e->>4, (e->>5)::timestamptz, (e->>5)::timestamptz FROM jsonb_array_elements($2::jsonb) e`,
    [storeId, JSON.stringify(events)],
  );
}

async function sale(tx: Tx, storeId: string, orderId: string, amount: number, gateway: string, at: Date) {
  await tx.query(
    `INSERT INTO order_transactions (id, order_id, store_id, kind, status, gateway, amount_minor, created_at) VALUES ($1,$2,$3,'sale','success',$4,$5,$6)`,
    [uuidv7(at.getTime()), orderId, storeId, gateway, amount, at]);
}

async function fulfillment(tx: Tx, storeId: string, orderId: string, status: string, tracking: string, named: { id: string; quantity: number }[], covered: { id: string; quantity: number }[], at: Date) {
  await tx.query(
    `INSERT INTO fulfillments (id, order_id, store_id, status, tracking_number, tracking_url, tracking_company, line_items, covered, notify_customer, created_at, updated_at)
     VALUES ($1,$2,$3,$4,$5,$6,'UPS',$7,$8,true,$9,$9)`,
    [uuidv7(at.getTime()), orderId, storeId, status, tracking, `https://www.ups.com/track?tracknum=${tracking}`, JSON.stringify(named), JSON.stringify(covered), at]);
}

/** One order with totals computed as the service computes them (pricing.ts), at `created`. */
async function insertOrder(tx: Tx, storeId: string, number: number, o: DemoOrder, created: Date) {
  const id = uuidv7(created.getTime());
  const items = o.lines.reduce((s, l) => s + l.qty * l.price, 0);
  const discount = o.discount ? Math.floor((items * o.discount.percentBp + 5000) / 10_000) : 0;
  const lineDiscounts = o.lines.map((l) => (items ? Math.floor((discount * l.qty * l.price) / items) : 0));
  lineDiscounts[0] += discount - lineDiscounts.reduce((s, x) => s + x, 0);
  const subtotal = items - discount;
  const shipping = 500;
  const tax = o.taxRate ? Math.floor((subtotal * Number(o.taxRate) * 1_000_000 + 500_000) / 1_000_000) : 0;
  const total = subtotal + shipping + tax;
  const c = o.customer;
  const address = { first_name: c.first, last_name: c.last, address1: '1 Main Street', city: c.city, province: c.province, country: 'US', country_code: 'US', zip: '10001', phone: '+15550100' };
  const shipped = ['partial', 'delivered', 'returned', 'exchange'].includes(o.status);
  const paid = o.financial === 'paid';
  const appliedDiscount = o.discount ? { code: o.discount.code, type: 'Percentage', percentBp: o.discount.percentBp, amountMinor: null, applyOn: [] } : null;
  await tx.query(
    `INSERT INTO orders (id, store_id, order_number, customer_id, email, phone, status, financial_status, fulfillment_status, subtotal_minor, tax_minor,
       tax_rate, shipping_minor, discount_minor, total_minor, paid_minor, payment_method, discount_code, discount, shipping_address, billing_address,
       shipping_line, note, tracking_number, courier_name, delivery_date, shipped_date, confirmation_number, processed_at, created_at, updated_at)
     VALUES ($1,$2,$3,$4,$5,'+15550100',$6,$7,$8,$9,$10,$11::numeric,$12,$13,$14,$15,$16,$17,$18,$19,$19,$20,$21,$22,$23,$24,$25,$26,$27,$27,$27)`,
    [
      id, storeId, number, c.id, c.email, o.status, o.financial, o.fulfillment, subtotal, tax, o.taxRate ?? null, shipping, discount, total,
      paid ? total : 0, o.payment, o.discount?.code ?? null, appliedDiscount ? JSON.stringify(appliedDiscount) : null, JSON.stringify(address),
      JSON.stringify({ title: 'Standard', code: 'standard', source: null, price: '5.00' }), o.note ?? null,
      o.fulfillments?.[0]?.tracking ?? null, o.fulfillments ? 'UPS' : null,
      o.status === 'delivered' || o.status === 'returned' || o.status === 'exchange' ? new Date(created.getTime() + 3 * DAY) : null,
      shipped ? new Date(created.getTime() + DAY) : null, `DEMO${number}`, created,
    ],
  );
  const lineIds: string[] = [];
  for (const [i, l] of o.lines.entries()) {
    const lineId = uuidv7(created.getTime());
    lineIds.push(lineId);
    await tx.query(
      `INSERT INTO order_line_items (id, order_id, product_id, variant_id, title, variant_title, quantity, price_minor, total_discount_minor,
         stock_deducted, fulfilled_quantity, position)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)`,
      [lineId, id, l.product, l.variant, l.title, l.variantTitle, l.qty, l.price, lineDiscounts[i], o.status !== 'returned', l.fulfilled ?? 0, i + 1],
    );
  }
  if (paid) await sale(tx, storeId, id, total, o.payment, created);
  for (const f of o.fulfillments ?? []) {
    const covered = f.lines === 'all' ? o.lines.map((l, i) => ({ id: lineIds[i], quantity: l.qty })) : f.lines.map((x) => ({ id: lineIds[x.line], quantity: x.qty }));
    const named = f.lines === 'all' ? [] : covered;
    await fulfillment(tx, storeId, id, f.status, f.tracking, named, covered, new Date(created.getTime() + DAY));
  }
}
