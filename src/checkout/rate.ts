// One shipping rate as the checkout offers it (C15.1 `shipping_rates[]`): from a merchant zone
// (C15.2, `source` null) or a shipping app (C15.3, `source` the app's handle).
import { Type, type Static } from 'typebox';
import { nullable } from '../http/schemas.js';
import { MAX_APP_HANDLE_CHARS } from '../apps/app-input.js';
import { MAX_SERVICE_NAME_CHARS } from './rate-reply.js';

/**
 * The longest handle a checkout can offer: `app-{app_handle}-{service_code}` with both at their
 * limits (320; a zone's `zone-{uuid}` is 41). What a buyer sends to choose one may be this long.
 */
export const MAX_RATE_HANDLE_CHARS = 'app-'.length + MAX_APP_HANDLE_CHARS + '-'.length + MAX_SERVICE_NAME_CHARS;

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
