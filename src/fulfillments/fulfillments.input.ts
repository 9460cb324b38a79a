// Reading a fulfillment from a request body (app-api.md Fulfillment): flat or wrapped as
// `{ fulfillment: { ... } }`; each field's problem is a field error (C5.1).
import { bodyObject, fieldError, has, optionalBoolean, unwrap, type Body } from '../content/fields.js';

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
  if (v.length > max) throw fieldError(key, `is too long (maximum ${max} characters)`);
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
