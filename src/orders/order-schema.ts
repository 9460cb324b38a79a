// The order's response schemas: exactly what the views of src/orders/order-view.ts write (issue 11
// section 1). The list view is the App API's second hot path (`GET /orders.json?limit=50` is
// benchmarked): no `anyOf` anywhere below, nullables as type lists, closed sets as `StringEnum`.
import { Type } from 'typebox';
import { Money, nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { ADDRESS_KEYS, FINANCIAL_STATUSES, FULFILLMENT_STATUSES, MERCHANT_STATUSES, type AddressKey } from './order-view.js';

const text = (description?: string) => nullable(Type.String(description ? { description } : {}));

export const AddressSchema = Type.Object(
  Object.fromEntries(ADDRESS_KEYS.map((key) => [key, text()])) as Record<AddressKey, ReturnType<typeof text>>,
  { description: 'every key present, null when not given' },
);

export const OrderCustomerSchema = Type.Object({
  id: Type.String({ description: 'the customer UUID' }),
  email: Type.String(),
  first_name: text('the name up to its first space'),
  last_name: text('the rest of the name'),
  phone: text(),
});

export const LineItemSchema = Type.Object({
  id: Type.String({ description: 'the line item UUID' }),
  product_id: nullable(Type.Integer({ description: 'numeric product id; null for a custom line item' })),
  variant_id: nullable(Type.Integer({ description: "numeric variant id, or the product's id for a product without variants; null for a custom line item" })),
  title: Type.String(),
  variant_title: text(),
  quantity: Type.Integer(),
  price: Money('the unit price'),
  line_price: Money('price x quantity'),
  final_price: Money('the unit price after discounts'),
  final_line_price: Money('the line price after discounts'),
  total_discount: Money(),
  sku: text(),
  fulfillment_status: nullable(StringEnum(['fulfilled', 'partial'] as const, { description: 'null while nothing of the line is fulfilled' })),
  requires_shipping: Type.Boolean(),
  taxable: Type.Boolean(),
  properties: Type.Array(Type.Array(Type.String(), { minItems: 2, maxItems: 2 }), { description: '[key, value] pairs' }),
});

const ShippingLineSchema = Type.Object({
  title: text(),
  code: text(),
  source: text('the shipping app handle, or null'),
  price: Money('the price of the rate chosen, before a FreeShipping code (what is charged is `shipping_price`)'),
  currency: Type.String(),
});

/** app-api.md Order, list view: the full view's subset, in its order. */
export const OrderListItemSchema = Type.Object({
  id: Type.String({ description: 'the order UUID (v7, so ids sort by creation)' }),
  name: Type.String({ description: '`#` and the order number' }),
  order_number: Type.Integer(),
  email: text(),
  phone: text(),
  financial_status: StringEnum(FINANCIAL_STATUSES),
  fulfillment_status: StringEnum(FULFILLMENT_STATUSES),
  subtotal_price: Money(),
  tax_price: Money(),
  shipping_price: Money(),
  total_discounts: Money(),
  total_price: Money(),
  line_items: Type.Array(LineItemSchema),
  customer: nullable(OrderCustomerSchema),
  shipping_address: nullable(AddressSchema),
  billing_address: nullable(AddressSchema),
  shipping_lines: Type.Array(ShippingLineSchema, { description: 'none or one' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

/** app-api.md Order (App API), every field, as `orderView` writes it. */
export const OrderSchema = Type.Object({
  id: OrderListItemSchema.properties.id,
  name: OrderListItemSchema.properties.name,
  order_number: Type.Integer(),
  email: text(),
  phone: text(),
  financial_status: StringEnum(FINANCIAL_STATUSES),
  fulfillment_status: StringEnum(FULFILLMENT_STATUSES),
  cancelled: Type.Boolean(),
  cancelled_at: nullable(Timestamp()),
  cancel_reason: text(),
  currency: Type.String({ description: 'ISO 4217' }),
  presentment_currency: Type.String({ description: 'the same as currency' }),
  subtotal_price: Money(),
  tax_price: Money(),
  shipping_price: Money(),
  total_discounts: Money(),
  total_price: Money(),
  total_refunded_amount: Money(),
  total_net_amount: Money('total_price less total_refunded_amount'),
  item_count: Type.Integer({ description: 'the sum of the line items\' quantities' }),
  line_items: Type.Array(LineItemSchema),
  customer: nullable(OrderCustomerSchema),
  shipping_address: nullable(AddressSchema),
  billing_address: nullable(AddressSchema),
  shipping_methods: Type.Array(Type.Object({
    handle: text("the handle of the rate chosen at checkout (`zone-{id}`, `app-{app}-{code}`, C15.2, C15.3); on an order made without a checkout, the shipping line's code"),
    title: text(),
    price: Money('after any FreeShipping discount'),
    original_price: Money('before any discount'),
  }), { description: 'none or one' }),
  shipping_lines: Type.Array(ShippingLineSchema, { description: 'none or one' }),
  tax_lines: Type.Array(Type.Object({ title: Type.String(), price: Money(), rate: Type.Number({ description: '0.08 is 8 %' }) }), { description: 'none or one' }),
  transactions: Type.Array(Type.Object({
    id: Type.String(),
    amount: Money(),
    kind: StringEnum(['sale', 'refund'] as const),
    status: StringEnum(['pending', 'success'] as const),
    gateway: text('the payment method'),
    created_at: Timestamp(),
  })),
  discount_applications: Type.Array(Type.Object({
    type: StringEnum(['discount_code', 'automatic'] as const),
    code: nullable(Type.String({ description: 'null for an automatic discount' })),
    value: Type.String({ description: 'a decimal string: the percentage, the fixed amount, or "100.00" for free shipping' }),
    value_type: StringEnum(['fixed_amount', 'percentage'] as const),
    title: Type.String(),
  }), { description: "the discount code, if any, then the automatic discounts of the store's functions (C11.3)" }),
  metafields: Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown({ description: "the value as its metafield type reads (string, number, boolean, object, list...)" })), {
    description: '`{ namespace: { key: value } }` for a token holding `read_metafields` (the Scopes table), else `{}`; always `{}` in webhook bodies (read the order or `/api/v1/metafields.json` for them)',
  }),
  attributes: Type.Array(Type.Unknown({ description: 'as sent when the order was taken (any JSON value)' })),
  note: text(),
  tags: Type.Array(Type.String()),
  tracking_number: text(),
  tracking_url: text(),
  order_status_url: Type.String({ description: 'the customer-facing status page' }),
  confirmation_number: Type.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  processed_at: Timestamp(),
});

/** The merchant admin order record (C7.1), as `merchantOrderRecord` writes it. */
export const MerchantOrderSchema = Type.Object({
  orderId: Type.String({ description: 'the order UUID' }),
  orderNumber: Type.Integer(),
  name: Type.String(),
  status: StringEnum(MERCHANT_STATUSES),
  financialStatus: StringEnum(FINANCIAL_STATUSES),
  fulfillmentStatus: StringEnum(FULFILLMENT_STATUSES),
  totalPrice: Money(),
  courierName: text(),
  trackingNumber: text(),
  digitaldata: text(),
  deliveryDate: nullable(Timestamp()),
  notes: text(),
  products: Type.Array(Type.Object({
    lineItemId: Type.String(),
    productId: text('the product UUID; null for a custom line item'),
    varientId: text('the variant UUID, or null'),
    title: Type.String(),
    quantity: Type.Integer(),
    price: Money('the unit price'),
  })),
  clientName: text('the shipping address name, else the customer name'),
  email: text(),
  mobileNumber: text(),
  address: text('shipping address1'),
  city: text(),
  state: text('shipping province'),
  country: text(),
  pinCode: text('shipping zip'),
  paymentMethod: text(),
  shippedDate: nullable(Timestamp()),
  updatedAt: Timestamp(),
});
