// Reading request bodies of the catalog routes. Checks are written out rather than left to the
// JSON schema, because app-api.md fixes their messages and statuses per resource (a product without
// a title is a 400 `{ errors: { title: ["can't be blank"] } }`, a collection without one a 422), and
// because multipart fields arrive as strings. Every reader records a message per field; `check()`
// throws them all at once in the route's error shape.
import { AppError, badRequest, type ErrorKind } from '../http/errors.js';
import { Type } from 'typebox';
import { AmountTooLargeError, parseMoney } from '../money.js';
import { isUuid } from '../ids.js';
import { isBlankText, longerThan } from '../text.js';
import { INT4_MAX } from '../db/sql.js';

export const BLANK = "can't be blank";

export class FieldErrors {
  readonly fields: Record<string, string[]> = {};
  add(field: string, message: string): void {
    (this.fields[field] ??= []).push(message);
  }
  get any(): boolean {
    return Object.keys(this.fields).length > 0;
  }
  /** Throws the collected messages (no-op when there are none). The message names the first. */
  check(kind: ErrorKind = 'bad_request'): void {
    const first = Object.entries(this.fields)[0];
    if (first) throw new AppError(kind, `${first[0]} ${first[1][0]}`, this.fields);
  }
}

export type Body = Record<string, unknown>;

/**
 * The resource's fields: `{ product: {...} }` as many clients send it, or the flat object the
 * specification lists (both accepted, as for webhook subscriptions in C6.4).
 */
export function unwrap(body: unknown, key: string): Body {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object');
  const inner = (body as Body)[key];
  if (inner && typeof inner === 'object' && !Array.isArray(inner)) return inner as Body;
  return body as Body;
}

export const has = (body: Body, key: string) => Object.prototype.hasOwnProperty.call(body, key) && body[key] !== undefined;

/** A string; `null` is read as absent unless `nullable`. Blank strings fail `required`. */
export function str(errors: FieldErrors, body: Body, key: string, opts: { required?: boolean; max?: number; nullable?: boolean; label?: string } = {}): string | null | undefined {
  const label = opts.label ?? key;
  const v = body[key];
  if (v === undefined || v === null) {
    if (opts.required) errors.add(label, BLANK);
    return v === null && opts.nullable ? null : undefined;
  }
  if (typeof v !== 'string') {
    errors.add(label, 'must be a string');
    return undefined;
  }
  if (opts.required && isBlankText(v)) {
    errors.add(label, BLANK);
    return undefined;
  }
  if (opts.max !== undefined && longerThan(v, opts.max)) {
    errors.add(label, `is too long (maximum is ${opts.max} characters)`);
    return undefined;
  }
  return v;
}

const AMOUNT_TEXT = { type: 'string', pattern: '^(\\s*\\d+(\\.\\d{1,2})?\\s*)?$' };
// No `multipleOf: 0.01`: Ajv's floating-point test wrongly refuses some large two-decimal amounts
// (1148448427.81); the reader checks the decimals exactly.
const AMOUNT_NUMBER = { type: 'number', minimum: 0 };
const AMOUNT_WORDS = 'must be a non-negative amount with at most two decimals';

/**
 * What `money()` reads, as a schema (the route validates it before the reader converts it): a
 * decimal string or a number from 0 with at most two decimals; '' or null clear it where allowed.
 */
export function amountSchema(description: string, opts: { nullable?: boolean } = {}) {
  return Type.Unsafe<string | number | null>({
    anyOf: opts.nullable ? [AMOUNT_TEXT, AMOUNT_NUMBER, { type: 'null' }] : [AMOUNT_TEXT, AMOUNT_NUMBER],
    description: `${description}: a decimal string or number from 0, at most two decimals${opts.nullable ? '; null or "" clears it' : ''}`,
    'x-error': AMOUNT_WORDS,
  });
}

/**
 * An amount `money()` reads without `nullable`: null and "" are let through to the reader, which
 * answers "can't be blank" for them (the schema alone would say "must be a non-negative amount").
 */
export function requiredAmountSchema(description: string) {
  return Type.Unsafe<string | number | null>({
    anyOf: [AMOUNT_TEXT, AMOUNT_NUMBER, { type: 'null' }],
    description: `${description}: a decimal string or number from 0, at most two decimals (null or "" -> "can't be blank")`,
    'x-error': AMOUNT_WORDS,
  });
}

/** What `measure()` reads with `nullable`: a number from 0 (numeric text too); null or "" clears it. */
export function measureSchema(description: string) {
  return Type.Unsafe<number | string | null>({
    anyOf: [{ type: 'number', minimum: 0, maximum: 1e9 }, { type: 'string', pattern: '^(\\s*\\d+(\\.\\d+)?\\s*)?$' }, { type: 'null' }],
    description: `${description}: a number from 0 (or its decimal text); null or "" clears it`,
    'x-error': 'must be a number of at least 0',
  });
}

/** What `isHttpUrl()` accepts: an absolute http(s) URL of at most 2048 characters. */
export function httpUrlSchema(description: string, opts: { nullable?: boolean } = {}) {
  return Type.Unsafe<string | null>({
    type: opts.nullable ? ['string', 'null'] : 'string',
    maxLength: 2048,
    description: `${description}: an absolute http or https URL${opts.nullable ? '; null or "" clears it' : ''}`,
    'x-error': 'must be an http or https URL',
  });
}


/** What `count()` reads: a whole number from 0 (a numeric string too, as multipart sends them). */
export function countSchema(description: string) {
  return Type.Unsafe<number | string>({
    anyOf: [{ type: 'integer', minimum: 0, maximum: INT4_MAX }, { type: 'string', pattern: '^\\s*\\d+\\s*$' }],
    description: `${description}: a whole number from 0`,
    'x-error': 'must be a whole number of at least 0',
  });
}

/** What `tagList()` reads. */
export const tagsSchema = Type.Unsafe<string | string[] | null>({
  type: ['array', 'string', 'null'],
  items: { type: 'string' },
  description: 'an array of strings, or one comma-separated string; trimmed, blanks dropped, at most 255 characters each; null clears them',
  'x-error': 'must be an array of strings',
});

/** A string field `str()` reads with `max`; null reads as absent (or clears it, where nullable). */
export function textSchema(description: string, max: number) {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: max, description, 'x-error': { maxLength: `is too long (maximum is ${max} characters)` } });
}

const MAX_MINOR = 1e15; // far below 2^53, far above any price

/**
 * Money given as a decimal string ("19.90") or a JSON number (19.9), at most two decimals, not
 * negative, converted to minor units without floating-point sums (C5.2).
 */
export function money(errors: FieldErrors, value: unknown, label: string, opts: { nullable?: boolean } = {}): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') {
    if (opts.nullable) return null;
    errors.add(label, BLANK);
    return undefined;
  }
  // A number or a string with more than two decimals is refused, not rounded (parseMoney).
  let minor: number | null = null;
  let tooLarge = false;
  try {
    minor = typeof value === 'number' || typeof value === 'string' ? parseMoney(value) : null;
  } catch (err) {
    tooLarge = err instanceof AmountTooLargeError;
  }
  // "-0" and "-0.00" read as -0: signed text is refused like any negative amount, as the route
  // schemas' pattern refuses it, also where no schema runs first (multipart fields, the App API
  // update's `variants[0]`). A JSON number -0 is the number 0 and stays accepted.
  if (!tooLarge && (minor === null || minor < 0 || Object.is(minor, -0))) {
    errors.add(label, 'must be a non-negative amount with at most two decimals');
    return undefined;
  }
  if (tooLarge || minor! > MAX_MINOR) {
    errors.add(label, 'is too large');
    return undefined;
  }
  return minor;
}


/** A whole number >= 0 (a numeric string is accepted, as multipart fields are strings). */
export function count(errors: FieldErrors, value: unknown, label: string): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > INT4_MAX) {
    errors.add(label, 'must be a whole number of at least 0');
    return undefined;
  }
  return n;
}

/** A finite number >= 0 (numeric strings accepted). */
export function measure(errors: FieldErrors, value: unknown, label: string, opts: { nullable?: boolean } = {}): number | null | undefined {
  if (value === undefined) return undefined;
  if ((value === null || value === '') && opts.nullable) return null;
  const n = typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 1e9) {
    errors.add(label, 'must be a number of at least 0');
    return undefined;
  }
  return n;
}

/** An absolute http(s) URL. */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string' || longerThan(value, 2048)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Tags: an array of strings (or one comma-separated string), trimmed, blanks dropped, de-duplicated. */
export function tagList(errors: FieldErrors, value: unknown, label = 'tags'): string[] | undefined {
  if (value === undefined) return undefined;
  if (value === null) return [];
  const raw = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(raw) || raw.some((t) => typeof t !== 'string')) {
    errors.add(label, 'must be an array of strings');
    return undefined;
  }
  const tags = [...new Set((raw as string[]).map((t) => t.trim()).filter(Boolean))];
  if (tags.some((t) => longerThan(t, 255))) {
    errors.add(label, 'must each be at most 255 characters');
    return undefined;
  }
  return tags;
}

/** A product or variant id as the API accepts it: a UUID or a numeric id (C6.1, C14.2). */
export function isCatalogId(value: unknown): value is string {
  return typeof value === 'string' && (isUuid(value) || /^[1-9]\d{0,14}$/.test(value));
}

/** Ids sent as JSON numbers are read as their decimal text. */
export function idText(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === 'string') return value.trim();
  return null;
}
