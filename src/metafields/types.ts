// Metafield types (C6.6) and values (C14.6): a value may be sent as its raw string ("42", "true",
// JSON text) or as a JSON value of the type; it is stored as that raw string and returned typed.
import { isCleanInput } from '../http/input-guard.js';
import { isBlankText, longerThan } from '../text.js';

export const METAFIELD_TYPES = [
  'single_line_text_field', 'multi_line_text_field', 'number_integer', 'number_decimal', 'boolean',
  'json', 'date', 'date_time', 'url', 'color',
] as const;
export type MetafieldType = (typeof METAFIELD_TYPES)[number];
export const isMetafieldType = (t: unknown): t is MetafieldType => typeof t === 'string' && (METAFIELD_TYPES as readonly string[]).includes(t);

export const OWNER_TYPES = ['shop', 'product', 'variant', 'collection', 'customer', 'order', 'page'] as const;
export type OwnerType = (typeof OWNER_TYPES)[number];
export const isOwnerType = (t: unknown): t is OwnerType => typeof t === 'string' && (OWNER_TYPES as readonly string[]).includes(t);

/** Longest raw value kept (a JSON document included). */
export const MAX_RAW_LENGTH = 65_536;

const URL_SCHEMES = new Set(['http:', 'https:', 'mailto:', 'sms:', 'tel:']);

function validDate(y: number, m: number, d: number): boolean {
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2}))?$/;

/** A finite number as plain decimal text: the shortest digits that read back as it, never an exponent. */
export function plainDecimal(n: number): string {
  const text = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!m) return text;
  const [, sign, lead, rest = '', expText] = m;
  const digits = lead + rest;
  const exp = Number(expText);
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const point = exp + 1;
  return digits.length <= point ? sign + digits.padEnd(point, '0') : `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * The raw string for `value` of `type`, or the reason it does not fit. Text must be a string (no
 * line break in a single line); numbers a JSON number or its decimal text (integers within 2^53);
 * booleans true/false or "true"/"false"; JSON any value, or a string holding JSON text; a date
 * `YYYY-MM-DD`; a date-time ISO 8601; a URL with scheme http, https, mailto, sms or tel; a color
 * `#RRGGBB`. Blank values are refused.
 */
export function rawValue(type: MetafieldType, value: unknown): { raw: string } | { error: string } {
  const bad = { error: `is not a valid ${type} value` };
  if (value === undefined || value === null || (typeof value === 'string' && isBlankText(value))) return { error: "can't be blank" };
  let raw: string;
  switch (type) {
    case 'single_line_text_field':
      if (typeof value !== 'string' || /[\r\n]/.test(value)) return bad;
      raw = value;
      break;
    case 'multi_line_text_field':
      if (typeof value !== 'string') return bad;
      raw = value;
      break;
    case 'number_integer': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : NaN;
      if (!Number.isSafeInteger(n)) return bad;
      raw = String(n);
      break;
    }
    case 'number_decimal':
      // A JSON number is written as plain decimal text, as a string value must be (no exponent,
      // docs/decisions.md): String(1e21) would store "1e+21", which the string form refuses.
      if (typeof value === 'number' && Number.isFinite(value)) raw = plainDecimal(value);
      else if (typeof value === 'string' && /^[+-]?\d+(\.\d+)?$/.test(value.trim()) && Number.isFinite(Number(value))) raw = value.trim();
      else return bad;
      break;
    case 'boolean':
      if (value === true || value === 'true') raw = 'true';
      else if (value === false || value === 'false') raw = 'false';
      else return bad;
      break;
    case 'json':
      if (typeof value === 'string') {
        // JSON text is client JSON too: read back, it is serialised and copied into jsonb (order
        // views, webhook payloads), so it gets the body's checks (depth, NUL, lone surrogates).
        let parsed: unknown;
        try {
          parsed = JSON.parse(value);
        } catch {
          return bad;
        }
        if (!isCleanInput(parsed)) return bad;
        raw = value;
      } else {
        raw = JSON.stringify(value); // a body value: depth already bounded by the JSON parser
      }
      break;
    case 'date': {
      const m = typeof value === 'string' ? DATE.exec(value) : null;
      if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return bad;
      raw = value as string;
      break;
    }
    case 'date_time': {
      const m = typeof value === 'string' ? DATE_TIME.exec(value) : null;
      if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return bad;
      if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59) return bad;
      if (m[8] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return bad;
      raw = value as string;
      break;
    }
    case 'url': {
      if (typeof value !== 'string') return bad;
      try {
        const url = new URL(value);
        if (!URL_SCHEMES.has(url.protocol)) return bad;
        if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.hostname) return bad;
      } catch {
        return bad;
      }
      raw = value;
      break;
    }
    case 'color':
      if (typeof value !== 'string' || !/^#[0-9a-fA-F]{6}$/.test(value)) return bad;
      raw = value;
      break;
  }
  if (longerThan(raw, MAX_RAW_LENGTH)) return { error: `is too long (maximum is ${MAX_RAW_LENGTH} characters)` };
  return { raw };
}

/** The stored raw string as the typed value of the API (C14.6: `number_decimal` as a number). */
export function typedValue(type: string, raw: string): unknown {
  switch (type) {
    case 'number_integer':
    case 'number_decimal':
      return Number(raw);
    case 'boolean':
      return raw === 'true';
    case 'json':
      return JSON.parse(raw);
    default:
      return raw;
  }
}
