// One shipping rate as the checkout offers it (C15.1 `shipping_rates[]`): from a merchant zone
// (C15.2, `source` null) or a shipping app (C15.3, `source` the app's handle).
import { Type, type Static } from 'typebox';
import { nullable } from '../http/schemas.js';

export const ShippingRateSchema = Type.Object({
  handle: Type.String({ description: '`zone-{shippingZoneId}` or `app-{app_handle}-{service_code}`; what the buyer chooses' }),
  title: Type.String(),
  price: Type.String({ description: 'decimal string (C5.2)' }),
  code: Type.String(),
  source: nullable(Type.String(), { description: "the shipping app's handle, or null for a merchant zone" }),
  description: nullable(Type.String()),
  min_delivery_date: nullable(Type.String()),
  max_delivery_date: nullable(Type.String()),
});

export type ShippingRate = Static<typeof ShippingRateSchema>;
