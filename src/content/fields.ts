// Reading request bodies field by field, for the store-data areas (content, shipping, customers,
// discounts). Each check throws a 400 that carries both a sentence (for the envelope error) and a
// per-field message (for the errors body, `{ errors: { email: ["can't be blank"] } }`), so one rule
// serves both shapes of C5.1. Generic: it could move to src/http once another area wants it.
import { Type } from 'typebox';
import { badRequest, type AppError } from '../http/errors.js';
import { isHttpUrl } from '../catalog/input.js';
import { isBlankText, longerThan } from '../text.js';

export type Body = Record<string, unknown>;

export function fieldError(field: string, problem: string): AppError {
  return badRequest(`${field} ${problem}`, { [field]: [problem] });
}

/** The JSON body as an object; anything else (array, string, no body) -> 400. */
export function bodyObject(body: unknown): Body {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object');
  return body as Body;
}

/**
 * A body that may come wrapped under the resource key, REST-style (`{ customer: { ... } }`), or
 * flat (`{ email, ... }`): the wrapped form is used when that key holds an object.
 */
export function unwrap(body: unknown, key: string): Body {
  const outer = bodyObject(body);
  const inner = outer[key];
  return inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Body) : outer;
}

export const has = (body: Body, key: string) => body[key] !== undefined;

/** Required text: a string that is not blank (`isBlankText`: invisible characters alone are blank); returned trimmed. */
export function requiredText(body: Body, key: string, max = 255): string {
  const value = body[key];
  if (value === undefined || value === null || (typeof value === 'string' && isBlankText(value))) throw fieldError(key, "can't be blank");
  if (typeof value !== 'string') throw fieldError(key, 'must be a string');
  const text = value.trim();
  if (longerThan(text, max)) throw fieldError(key, `is too long (maximum ${max} characters)`);
  return text;
}

/** Optional text: undefined when absent, null when sent as null, else the string (trimmed unless `raw`). */
export function optionalText(body: Body, key: string, opts: { max?: number; raw?: boolean } = {}): string | null | undefined {
  const value = body[key];
  if (value === undefined || value === null) return value;
  if (typeof value !== 'string') throw fieldError(key, 'must be a string');
  const text = opts.raw ? value : value.trim();
  const max = opts.max ?? 255;
  if (longerThan(text, max)) throw fieldError(key, `is too long (maximum ${max} characters)`);
  return text;
}

/**
 * Optional absolute http(s) URL (at most 2048 characters), trimmed: undefined when absent, null when
 * sent as null or blank. Such a value ends up in a storefront's `href` or `<meta content>`, so a
 * `javascript:` link or a relative path is refused rather than stored.
 */
export function optionalHttpUrl(body: Body, key: string): string | null | undefined {
  const text = optionalText(body, key, { max: 2048 });
  if (text === undefined || text === null || text === '') return text === '' ? null : text;
  if (!isHttpUrl(text)) throw fieldError(key, 'must be an http or https URL');
  return text;
}

/** The schemes a storefront link may name; anything else with a scheme (`javascript:`, `data:`) runs or embeds. */
const LINK_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);

/**
 * Optional storefront link (a menu item's `url`): a path on the store (`/collections/all`, `#top`,
 * `?page=2`) or an http, https, mailto or tel URL, at most 2048 characters. It becomes an `href`,
 * so a scheme that runs script (`javascript:`, `data:`, `vbscript:`) is refused, read as a browser
 * reads it: ASCII tabs and newlines anywhere and leading spaces or controls do not hide one.
 */
export function optionalLink(body: Body, key: string): string | null | undefined {
  const text = optionalText(body, key, { max: 2048 });
  if (text === undefined || text === null || text === '') return text === '' ? null : text;
  const seen = text.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+/, '');
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(seen)?.[1].toLowerCase();
  if (scheme !== undefined && !LINK_SCHEMES.has(scheme)) throw fieldError(key, 'must be a path on the store or an http, https, mailto or tel URL');
  return text;
}

/** Optional boolean: undefined when absent; null or any non-boolean -> 400. */
export function optionalBoolean(body: Body, key: string): boolean | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw fieldError(key, 'must be true or false');
  return value;
}

const DECIMAL = /^(\d{1,12})(?:\.(\d+))?$/;

/**
 * A non-negative decimal sent as a JSON number or a decimal string ("19.90"), returned as its
 * canonical decimal string so that it reaches `numeric` columns without binary floating point.
 * `scale` caps the digits after the point; `integer` forbids them.
 */
export function optionalDecimal(body: Body, key: string, opts: { scale?: number; integer?: boolean; nullable?: boolean; min?: number; max?: number } = {}): string | null | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (value === null) {
    if (opts.nullable) return null;
    throw fieldError(key, 'must be a number');
  }
  const kind = opts.integer ? 'a whole number' : 'a number';
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw fieldError(key, `must be ${kind}`);
    if (value < 0) throw fieldError(key, 'must be greater than or equal to 0');
    text = String(value); // 1e21 and 1e-7 fall out of DECIMAL below
  } else if (typeof value === 'string') {
    text = value.trim();
    if (text.startsWith('-') && DECIMAL.test(text.slice(1))) throw fieldError(key, 'must be greater than or equal to 0');
  } else throw fieldError(key, `must be ${kind}`);
  const m = DECIMAL.exec(text);
  if (!m) throw fieldError(key, `must be ${kind}`);
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  if (opts.integer && fraction) throw fieldError(key, 'must be a whole number');
  const scale = opts.scale ?? 4;
  if (fraction.length > scale) throw fieldError(key, `must have at most ${scale} decimal places`);
  const canonical = `${String(Number(m[1]))}${fraction ? `.${fraction}` : ''}`;
  const n = Number(canonical);
  if (opts.min !== undefined && n < opts.min) throw fieldError(key, `must be greater than or equal to ${opts.min}`);
  if (opts.max !== undefined && n > opts.max) throw fieldError(key, `must be less than or equal to ${opts.max}`);
  return canonical;
}

/** A whole number in [min, max] (JSON number or digit string); null allowed when `nullable`. */
export function optionalInteger(body: Body, key: string, opts: { min?: number; max?: number; nullable?: boolean } = {}): number | null | undefined {
  const text = optionalDecimal(body, key, { integer: true, nullable: opts.nullable, min: opts.min, max: opts.max ?? 2_147_483_647 });
  return text === undefined || text === null ? text : Number(text);
}

/**
 * The last instant a four-digit ISO 8601 year can name. An offset can carry a date-time written as
 * 9999-12-31 past it, into year 10000, which JavaScript writes as `+010000-01-01T...`: text the
 * embedded database refused (a 500), PostgreSQL stored, and no response could show as ISO 8601.
 */
const LAST_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * An ISO 8601 date or date-time. A date alone is 00:00 UTC of that day; a date-time without an
 * offset is read as UTC (never as the server's local time). Impossible dates (02-30) are refused.
 */
export function parseInstant(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const m = INSTANT.exec(value.trim());
  if (!m) return null;
  const [y, mo, d, h = '0', mi = '0', s = '0'] = m.slice(1, 7);
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const local = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  const check = new Date(local);
  if (
    check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) ||
    check.getUTCHours() !== Number(h) || check.getUTCMinutes() !== Number(mi) || check.getUTCSeconds() !== Number(s)
  ) return null;
  let offsetMin = 0;
  const zone = m[8];
  if (zone && zone.toUpperCase() !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    const hours = Number(z[2]);
    const minutes = Number(z[3] ?? '0');
    if (hours > 23 || minutes > 59) return null;
    offsetMin = (z[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  const instant = local - offsetMin * 60_000;
  return instant > LAST_INSTANT_MS ? null : new Date(instant);
}

export function optionalInstant(body: Body, key: string, opts: { nullable?: boolean } = {}): Date | null | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (value === null) {
    if (opts.nullable) return null;
    throw fieldError(key, 'must be an ISO 8601 date-time');
  }
  const date = parseInstant(value);
  if (!date) throw fieldError(key, 'must be an ISO 8601 date-time');
  return date;
}

/** A decimal column read back as a JSON number (PGlite and node-postgres differ on `numeric`). */
export const toNumber = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

// ---------------------------------------------------------------------------------------------
// The same rules as schemas, for the routes' body schemas (issue 11 section 1): a route validates
// the types and the limits a schema can state, in the words of the readers above, and the reader
// then does what a schema cannot (trimming, blank checks, conversions, cross-field rules). Limits
// a reader counts after trimming stay in the reader alone: a schema would count the spaces too.

/**
 * What `optionalDecimal` / `optionalInteger` read: a JSON number, or a decimal string (checked
 * by the reader). The number's range and decimals are stated here with the reader's words; the
 * lower bound is always 0 here (a higher `min` stays with the reader, whose words for a negative
 * number are "must be greater than or equal to 0" whatever the bound). The decimals stay with the
 * reader too: Ajv's `multipleOf` misjudges large amounts (1148448427.81 is no multiple of 0.01 to it).
 */
export function decimalSchema<N extends boolean = false>(description: string, opts: { scale?: number; integer?: boolean; nullable?: N; max?: number } = {}) {
  const kind = opts.integer ? 'a whole number' : 'a number';
  const scale = opts.scale ?? 4;
  const types = [opts.integer ? 'integer' : 'number', 'string', ...(opts.nullable ? ['null'] : [])];
  return Type.Unsafe<number | string | (N extends true ? null : never)>({
    type: types,
    minimum: 0,
    ...(opts.max !== undefined ? { maximum: opts.max } : {}),
    description: `${description}: ${kind} from 0 (JSON number or decimal string)${opts.integer ? '' : `, at most ${scale} decimals`}`
      + `${opts.max !== undefined ? `, at most ${opts.max}` : ''}${opts.nullable ? '; null clears it' : ''}`,
    'x-error': { type: `must be ${kind}` },
  });
}

/** `parseInstant`'s grammar as a pattern (the reader trims, and refuses impossible dates such as 02-30). */
const INSTANT_PATTERN =
  '^\\s*\\d{4}-\\d{2}-\\d{2}(?:[Tt ]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d{1,9})?)?\\s*(?:[Zz]|[+-]\\d{2}(?::?\\d{2})?)?)?\\s*$';

/** What `optionalInstant` reads: an ISO 8601 date or date-time; without an offset it is UTC. */
export function instantSchema<N extends boolean = false>(description: string, opts: { nullable?: N } = {}) {
  const words = 'must be an ISO 8601 date-time';
  return Type.Unsafe<string | (N extends true ? null : never)>({
    type: opts.nullable ? ['string', 'null'] : 'string',
    pattern: INSTANT_PATTERN,
    description: `${description}: an ISO 8601 date (00:00 UTC) or date-time (UTC without an offset)${opts.nullable ? '; null for none' : ''}`,
    'x-error': words,
  });
}
