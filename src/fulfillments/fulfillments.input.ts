// Reading a fulfillment from a request body (app-api.md Fulfillment): flat or wrapped as
// `{ fulfillment: { ... } }`; each field's problem is a field error (C5.1).
import { Type } from 'typebox';
import { bodyObject, fieldError, has, optionalBoolean, unwrap, type Body } from '../content/fields.js';
import { nullable } from '../http/schemas.js';
import { longerThan } from '../text.js';
import { optionalBody, textish } from '../orders/schema-parts.js';

export const FULFILLMENT_STATUSES = ['pending', 'open', 'success', 'shipped', 'delivered', 'cancelled', 'error', 'failure'] as const;
/** app-api.md: what a create accepts. */
export const CREATE_STATUSES = ['pending', 'open', 'success', 'cancelled', 'error', 'failure'] as const;

export type FulfillmentStatus = (typeof FULFILLMENT_STATUSES)[number];

/** A quantity of one line item. */
export interface Qty {
  id: string;
  quantity: number;
}

export interface FulfillmentInput {
  status?: FulfillmentStatus;
  trackingNumber?: string | null;
  trackingUrl?: string | null;
  trackingCompany?: string | null;
  serviceId?: string | null;
  notifyCustomer?: boolean;
  lineItems?: Qty[];
}

/**
 * A string field stored exactly as sent: the tracking fields are carrier labels "stored verbatim"
 * (app-api.md Fulfillment, and `tracking_company` "free text, stored verbatim"), so surrounding
 * spaces are kept. Only the empty string means "none" (null).
 */
function optionalString(body: Body, key: string, max = 255): string | null | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (v === null) return null;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') throw fieldError(key, 'must be a string');
  if (longerThan(v, max)) throw fieldError(key, `is too long (maximum ${max} characters)`);
  return v === '' ? null : v;
}

/** `tracking_url` must be a well-formed absolute http(s) URL. */
function trackingUrl(body: Body): string | null | undefined {
  const v = optionalString(body, 'tracking_url', 2048);
  if (v === undefined || v === null) return v;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw fieldError('tracking_url', 'must be a well-formed URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) throw fieldError('tracking_url', 'must be a well-formed http or https URL');
  return v;
}

function status(body: Body, allowed: readonly string[]): FulfillmentStatus | undefined {
  const v = body.status;
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !allowed.includes(v)) throw fieldError('status', `must be one of ${allowed.join(', ')}`);
  return v as FulfillmentStatus;
}

function lineItems(value: unknown): Qty[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw fieldError('line_items', 'must be an array of { id, quantity }');
  if (value.length > 250) throw fieldError('line_items', 'has more than 250 items');
  return value.map((raw, i) => {
    const field = `line_items[${i}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw fieldError(field, 'must be an object { id, quantity }');
    const { id, quantity } = raw as Body;
    if (typeof id !== 'string' || id.trim() === '') throw fieldError(`${field}.id`, "can't be blank");
    if (typeof quantity !== 'number' || !Number.isInteger(quantity) || quantity < 1) throw fieldError(`${field}.quantity`, 'must be a whole number of at least 1');
    return { id: id.trim().toLowerCase(), quantity };
  });
}

export function readCreate(raw: unknown): FulfillmentInput {
  const body = unwrap(raw, 'fulfillment');
  return {
    status: status(body, CREATE_STATUSES) ?? 'pending',
    trackingNumber: optionalString(body, 'tracking_number'),
    trackingUrl: trackingUrl(body),
    trackingCompany: optionalString(body, 'tracking_company'),
    serviceId: optionalString(body, 'service_id'),
    notifyCustomer: optionalBoolean(body, 'notify_customer') ?? true,
    lineItems: lineItems(body.line_items),
  };
}

export function readUpdate(raw: unknown): FulfillmentInput {
  const body = unwrap(bodyObject(raw), 'fulfillment');
  return {
    status: status(body, FULFILLMENT_STATUSES),
    trackingNumber: optionalString(body, 'tracking_number'),
    trackingUrl: trackingUrl(body),
    trackingCompany: has(body, 'tracking_company') ? optionalString(body, 'tracking_company') : undefined,
  };
}

// ---- the bodies as schemas (issue 11 section 1): JSON types and lengths, in the readers' words ----
// Inside `line_items` only JSON types: the reader names an entry `line_items[0].quantity`, a
// failed schema `line_items.0.quantity`, so the entry's rules stay with the reader.

const verbatim = (description: string, max: number) => Type.Optional(textish(`${description}; stored exactly as sent, at most ${max} characters; "" or null means none`, { maxLength: max }));

const shared = {
  tracking_number: verbatim('the tracking number', 255),
  tracking_url: verbatim('a well-formed http or https URL', 2048),
  tracking_company: verbatim('the carrier, free text (no fixed list)', 255),
};

const statusOf = (statuses: readonly string[], description: string) =>
  Type.Optional(Type.String({ enum: [...statuses], description, 'x-error': `must be one of ${statuses.join(', ')}` }));

/** app-api.md `POST /orders/{orderId}/fulfillments.json`: flat or wrapped as `{ fulfillment: { ... } }`, or no body. */
export const FulfillmentCreateBody = optionalBody(Type.Object({
  status: statusOf(CREATE_STATUSES, 'default pending'),
  ...shared,
  service_id: verbatim('the fulfillment service', 255),
  notify_customer: Type.Optional(Type.Boolean({ description: 'default true: the customer is emailed when the order moves into shipped or partial' })),
  line_items: Type.Optional(nullable(Type.Array(Type.Object({
    id: Type.Optional(Type.String({ description: 'the line item UUID; required', 'x-error': { type: "can't be blank" } })),
    quantity: Type.Optional(Type.Number({ description: 'a whole number from 1; required', 'x-error': { type: 'must be a whole number of at least 1' } })),
  }, { 'x-error': { type: 'must be an object { id, quantity }' } }), { maxItems: 250, description: 'at most 250 `{ id, quantity }`; empty or left out: the whole order', 'x-error': { type: 'must be an array of { id, quantity }', maxItems: 'has more than 250 items' } }))),
}), 'Flat, or wrapped as `{ fulfillment: { ... } }`; no body fulfils the whole order');

/** app-api.md `PUT /fulfillments/{fulfillment_id}.json`: flat or wrapped as `{ fulfillment: { ... } }`. */
export const FulfillmentUpdateBody = Type.Object({
  status: statusOf(FULFILLMENT_STATUSES, 'delivered moves the order to delivered'),
  ...shared,
}, { description: 'Flat, or wrapped as `{ fulfillment: { ... } }`' });
