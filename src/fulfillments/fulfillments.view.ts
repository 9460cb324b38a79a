// What a fulfillment looks like from outside: the App API's Fulfillment (app-api.md; also the
// fulfillments/* payload) and the shipping email its customer receives.
import { Type } from 'typebox';
import { nullable, StringEnum, Timestamp } from '../http/schemas.js';
import type { OrderRow } from '../orders/order-view.js';
import type { FulfillmentRow } from './fulfillments.repo.js';
import { FULFILLMENT_STATUSES } from './fulfillments.input.js';

/** app-api.md Fulfillment (envelope `data.fulfillment`; also the fulfillments/* payload). */
export function fulfillmentView(f: FulfillmentRow) {
  return {
    fulfillmentId: f.id,
    orderId: f.order_id,
    status: f.status,
    serviceId: f.service_id,
    trackingNumber: f.tracking_number,
    trackingUrl: f.tracking_url,
    trackingCompany: f.tracking_company,
    lineItems: f.line_items,
    notifyCustomer: f.notify_customer,
    createdAt: f.created_at.toISOString(),
    updatedAt: f.updated_at.toISOString(),
  };
}
export type FulfillmentView = ReturnType<typeof fulfillmentView>;

/** app-api.md Fulfillment, as `fulfillmentView` writes it. */
export const FulfillmentSchema = Type.Object({
  fulfillmentId: Type.String({ description: 'the fulfillment UUID' }),
  orderId: Type.String({ description: 'the order UUID' }),
  status: StringEnum(FULFILLMENT_STATUSES),
  serviceId: nullable(Type.String()),
  trackingNumber: nullable(Type.String({ description: 'stored verbatim' })),
  trackingUrl: nullable(Type.String()),
  trackingCompany: nullable(Type.String({ description: 'stored verbatim' })),
  lineItems: Type.Array(Type.Object({ id: Type.String({ description: 'the line item UUID' }), quantity: Type.Integer() }), {
    description: 'as the app sent them; empty when the fulfillment covers the whole order',
  }),
  notifyCustomer: Type.Boolean(),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

/** The email of an order moving into `shipped` or `partial` (`status`), with the fulfillment's tracking. */
export function shippingEmail(order: OrderRow, f: FulfillmentRow, status: string) {
  const name = `#${order.order_number}`;
  const partial = status === 'partial';
  const tracking = [
    f.tracking_company && `Carrier: ${f.tracking_company}`,
    f.tracking_number && `Tracking number: ${f.tracking_number}`,
    f.tracking_url && `Track it: ${f.tracking_url}`,
  ].filter(Boolean).join('\n');
  return {
    to: order.email!,
    storeId: order.store_id,
    template: partial ? 'order_partially_shipped' : 'order_shipped',
    subject: partial ? `Part of your order ${name} is on its way` : `Your order ${name} is on its way`,
    text: [
      partial ? `Some items of your order ${name} have shipped; the rest will follow.` : `Every item of your order ${name} has shipped.`,
      tracking,
    ].filter(Boolean).join('\n\n'),
  };
}
