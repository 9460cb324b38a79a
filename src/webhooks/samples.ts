// Sample payloads for test deliveries (issue 14, `POST /apps/developer/{appId}/webhooks/test`):
// for every topic the platform delivers, a body in exactly the shape real deliveries of that topic
// have. Each is made by the serialiser the real delivery uses (orderCreatePayload, orderView,
// refundPayload, productView, inventoryLevelPayload, customerView, fulfillmentView,
// subscriptionPayload, gdprPayload) from a fixed sample row typed as the real rows are, so a new
// field in a payload reaches the samples or fails to compile; the map below must name every topic.
//
// The values are plainly fake: ids are the nil UUID's neighbours (`00000000-0000-0000-0000-00000000000N`)
// and numeric ids 0, which no real row has; people and places are on example.com and in
// Exampleville; the shop is the reserved sample domain SAMPLE_SHOP_DOMAIN (docs/decisions.md).
// Timestamps are the time of the test, so a receiver that refuses stale events takes them.
import { customerView } from '../customers/customers.service.js';
import type { CustomerRow } from '../customers/customers.repo.js';
import { productView, type ProductRow } from '../catalog/product-view.js';
import { inventoryLevelPayload } from '../catalog/products.service.js';
import { fulfillmentView } from '../fulfillments/fulfillments.view.js';
import type { FulfillmentRow } from '../fulfillments/fulfillments.repo.js';
import { orderCreatePayload, orderView, type LineJson, type OrderRow } from '../orders/order-view.js';
import { refundPayload } from '../orders/refunds.js';
import { subscriptionPayload } from '../payments/stripe.service.js';
import type { SubscriptionFacts } from '../payments/stripe-mapping.js';
import { gdprPayload } from '../gdpr/gdpr.service.js';
import type { GdprRequestType } from '../gdpr/gdpr.repo.js';
import type { Topic } from './topics.js';

/**
 * The `X-SVC-Shop-Domain` (and `shop_domain`) of every test delivery. It has the form of a store
 * slug (C2.5: lowercase letters, digits and `-`) but holds `--`, which a slug never does (slugify
 * folds every run of other characters into one `-`), so it can never name a real store.
 */
export const SAMPLE_SHOP_DOMAIN = 'webhook-test--example';

/** A fixed fake UUID: `sampleId(1)` = 00000000-0000-0000-0000-000000000001. */
const sampleId = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;

/** The sample store's id (`shop_id` of GDPR bodies, `storeId` of subscription bodies): the nil UUID. */
export const SAMPLE_STORE_ID = sampleId(0);
/** The `X-SVC-Gdpr-Request-Id` and `data_request.id` of GDPR samples. */
export const SAMPLE_GDPR_REQUEST_ID = sampleId(9);

const ORDER_ID = sampleId(1);
const LINE_ID = sampleId(2);
const CUSTOMER_ID = sampleId(3);
const PRODUCT_ID = sampleId(4);
const VARIANT_ID = sampleId(5);
const TRANSACTION_ID = sampleId(6);
const REFUND_ID = sampleId(7);
const FULFILLMENT_ID = sampleId(8);
const REFUND_LINE_ID = sampleId(10);
const REFUND_TRANSACTION_ID = sampleId(11);

const EMAIL = 'buyer@example.com';
const NAME = 'Sample Buyer';
/** 555-01xx numbers are reserved for fiction. */
const PHONE = '+1 555 0100';
const SKU = 'SAMPLE-TSHIRT-M';
const ADDRESS = { address1: '1 Example Street', city: 'Exampleville', province: 'California', country: 'United States', zip: '00000', phone: PHONE };

/** Two sample T-shirts at 25.00, shipped for 5.00: 55.00 paid. */
function sampleOrder(now: Date): OrderRow {
  const at = now.toISOString();
  const line: LineJson = {
    id: LINE_ID, product_id: PRODUCT_ID, variant_id: VARIANT_ID, product_num_id: 0, variant_num_id: 0, title: 'Sample T-shirt', variant_title: 'Size / M',
    sku: SKU, quantity: 2, price_minor: 2500, total_discount_minor: 0, properties: [], requires_shipping: true, taxable: true, stock_deducted: true,
    fulfilled_quantity: 0, position: 1,
  };
  return {
    id: ORDER_ID, store_id: SAMPLE_STORE_ID, order_number: 1001, email: EMAIL, phone: PHONE, status: 'paid', financial_status: 'paid',
    fulfillment_status: 'unfulfilled', cancelled_at: null, cancel_reason: null, currency: 'USD', subtotal_minor: 5000, tax_minor: 0, tax_rate: null,
    shipping_minor: 500, discount_minor: 0, total_minor: 5500, refunded_minor: 0, paid_minor: 5500, payment_method: 'manual', discount: null,
    automatic_discounts: [],
    shipping_address: { first_name: 'Sample', last_name: 'Buyer', company: null, province_code: 'CA', country_code: 'US', ...ADDRESS },
    billing_address: { first_name: 'Sample', last_name: 'Buyer', company: null, province_code: 'CA', country_code: 'US', ...ADDRESS },
    shipping_line: { title: 'Standard', code: 'standard', source: null, price: '5.00' }, attributes: [], note: null, tags: ['sample'],
    courier_name: null, tracking_number: null, tracking_url: null, digital_data: null, delivery_date: null, shipped_date: null, staff_id: null,
    confirmation_number: 'EXAMPLE00', processed_at: at, created_at: at, updated_at: at, slug: SAMPLE_SHOP_DOMAIN,
    customer: { id: CUSTOMER_ID, email: EMAIL, name: NAME, phone: PHONE }, line_items: [line],
    transactions: [{ id: TRANSACTION_ID, kind: 'sale', status: 'success', gateway: 'manual', amount_minor: 5500, created_at: at }],
    metafields: [],
  };
}

/** The order as the order topics after `orders/create` carry it: after the change they announce. */
function orderAfter(topic: Topic, now: Date): OrderRow {
  const o = sampleOrder(now);
  const at = now.toISOString();
  if (topic === 'orders/cancelled') {
    return {
      ...o, status: 'canceled', financial_status: 'refunded', cancelled_at: at, cancel_reason: 'customer', refunded_minor: o.total_minor,
      transactions: [...o.transactions!, { id: REFUND_TRANSACTION_ID, kind: 'refund', status: 'success', gateway: 'manual', amount_minor: o.total_minor, created_at: at }],
    };
  }
  if (topic === 'orders/fulfilled') {
    return {
      ...o, status: 'shipped', fulfillment_status: 'fulfilled', shipped_date: at, courier_name: 'Example Courier', tracking_number: 'EXAMPLE-TRACKING-0',
      tracking_url: 'https://example.com/track/EXAMPLE-TRACKING-0', line_items: o.line_items.map((l) => ({ ...l, fulfilled_quantity: l.quantity })),
    };
  }
  return o;
}

function sampleProduct(now: Date): ProductRow {
  return {
    id: PRODUCT_ID, num_id: 0, store_id: SAMPLE_STORE_ID, title: 'Sample T-shirt', handle: 'sample-t-shirt', body_html: '<p>A sample product.</p>',
    vendor: 'Example Vendor', product_type: 'Shirts', published_scope: 'web', status: 'active', tags: ['sample'], price_minor: 2500,
    compare_at_price_minor: null, inventory_quantity: 10, sku: null, requires_shipping: true, created_at: now, updated_at: now,
    variants: [{ num_id: 0, name: 'Size', value: 'M', price_minor: 2500, discount_price_minor: null, sku: SKU, stock: 10, stock_status: 'IN_STOCK' }],
    images: [{ num_id: 0, src: 'https://example.com/images/sample-t-shirt.png', position: 1 }],
  };
}

function sampleCustomer(now: Date): CustomerRow {
  return {
    id: CUSTOMER_ID, store_id: SAMPLE_STORE_ID, email: EMAIL, name: NAME, phone: PHONE, accepts_marketing: false, note: null, address: ADDRESS,
    created_at: now, updated_at: now, orders_count: 1, total_spent_minor: '5500',
  };
}

function sampleFulfillment(now: Date): FulfillmentRow {
  const lines = [{ id: LINE_ID, quantity: 2 }];
  return {
    id: FULFILLMENT_ID, order_id: ORDER_ID, store_id: SAMPLE_STORE_ID, status: 'success', service_id: null, tracking_number: 'EXAMPLE-TRACKING-0',
    tracking_url: 'https://example.com/track/EXAMPLE-TRACKING-0', tracking_company: 'Example Courier', line_items: lines, covered: lines,
    notify_customer: true, created_at: now, updated_at: now,
  };
}

/** A monthly 9.99 USD plan, in the state each subscription topic announces. */
function subscription(topic: SubscriptionFacts['topic'], now: Date) {
  const start = Math.floor(now.getTime() / 1000);
  const facts: SubscriptionFacts = {
    topic, subscriptionId: 'sub_example', storeId: SAMPLE_STORE_ID, orderId: ORDER_ID, invoiceId: 'INV-EXAMPLE-0001', customerId: 'cus_example',
    customerEmail: EMAIL, status: topic === 'subscriptions/payment_failed' ? 'past_due' : topic === 'subscriptions/cancelled' ? 'canceled' : 'active',
    planName: 'Example Plan', amount: 9.99, currency: 'usd', billingInterval: 'month', billingIntervalCount: 1, currentPeriodStart: start,
    currentPeriodEnd: start + 30 * 86_400, trialEnd: null,
  };
  return subscriptionPayload(facts, SAMPLE_STORE_ID, undefined);
}

function gdpr(type: GdprRequestType): Sample {
  const body = gdprPayload(type, {
    storeId: SAMPLE_STORE_ID, shopDomain: SAMPLE_SHOP_DOMAIN, requestId: SAMPLE_GDPR_REQUEST_ID,
    customer: type === 'shop_redact' ? { id: null, email: null, phone: null } : { id: CUSTOMER_ID, email: EMAIL, phone: PHONE },
    ordersRequested: true, orderIds: type === 'customer_redact' ? [ORDER_ID] : [],
  });
  // C9.4: GDPR deliveries carry the request id too.
  return { body, headers: { 'X-SVC-Gdpr-Request-Id': SAMPLE_GDPR_REQUEST_ID } };
}

export interface Sample {
  body: object;
  /** Headers real deliveries of the topic add to the common ones. */
  headers?: Record<string, string>;
}

type Context = { now: Date; baseUrl: string };
const order = (topic: Topic) => ({ now, baseUrl }: Context): Sample => ({ body: orderView(orderAfter(topic, now), baseUrl, 'withheld') });
const refund = ({ now }: Context): Sample => {
  const o = orderAfter('orders/cancelled', now);
  const lines = o.line_items.map((l) => ({ id: REFUND_LINE_ID, line_item_id: l.id, quantity: l.quantity, restock_type: 'cancel' as const, subtotal_minor: l.price_minor * l.quantity }));
  return { body: refundPayload(o, { id: REFUND_ID, transactions: [{ id: REFUND_TRANSACTION_ID, gateway: o.payment_method, amountMinor: o.total_minor }], reason: 'customer', restock: true, lines, at: now }) };
};
const product = ({ now }: Context): Sample => ({ body: productView(sampleProduct(now)) });
const customer = ({ now }: Context): Sample => ({ body: customerView(sampleCustomer(now)) });
const fulfillment = ({ now }: Context): Sample => ({ body: fulfillmentView(sampleFulfillment(now)) });
const sub = (topic: SubscriptionFacts['topic']) => ({ now }: Context): Sample => ({ body: subscription(topic, now) });

/** Every topic's sample, by the serialiser of its real deliveries (the Record makes the list complete). */
const SAMPLES: Record<Topic, (ctx: Context) => Sample> = {
  // C8.8: orders/create is app-api.md's field list; the other order topics carry the REST order.
  'orders/create': ({ now }) => ({ body: orderCreatePayload(sampleOrder(now)) }),
  'orders/updated': order('orders/updated'),
  'orders/paid': order('orders/paid'),
  'orders/cancelled': order('orders/cancelled'),
  'orders/fulfilled': order('orders/fulfilled'),
  'orders/delete': order('orders/delete'),
  'refunds/create': refund,
  'products/create': product,
  'products/update': product,
  'products/delete': product,
  'customers/create': customer,
  'customers/update': customer,
  'customers/delete': customer,
  'inventory_levels/update': ({ now }) => ({ body: inventoryLevelPayload({ productNumId: 0, variantNumId: 0, sku: SKU, available: 10, updatedAt: now }) }),
  'fulfillments/create': fulfillment,
  'fulfillments/update': fulfillment,
  'subscriptions/create': sub('subscriptions/create'),
  'subscriptions/renew': sub('subscriptions/renew'),
  'subscriptions/update': sub('subscriptions/update'),
  'subscriptions/payment_failed': sub('subscriptions/payment_failed'),
  'subscriptions/cancelled': sub('subscriptions/cancelled'),
  'customers/data_request': () => gdpr('data_request'),
  'customers/redact': () => gdpr('customer_redact'),
  'shop/redact': () => gdpr('shop_redact'),
};

/** The sample delivery of `topic` at `now`; `baseUrl` as the order's `order_status_url` uses it. */
export function samplePayload(topic: Topic, now: Date, baseUrl: string): Sample {
  return SAMPLES[topic]({ now, baseUrl });
}
