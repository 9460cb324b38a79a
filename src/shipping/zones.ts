// Shipping zones (app-api.md Shipping zone; POST, and C6.10's list, get, update and delete). A zone
// has one flat price, kept in minor units, plus optional weight or subtotal bounds.
import { Type, type Static } from 'typebox';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { badRequest, notFound } from '../http/errors.js';
import { isUuid, uuidv7 } from '../ids.js';
import { formatMinor, parseMoney } from '../money.js';
import type { Page } from '../http/paging.js';
import { Money, nullable, StringEnum, Timestamp } from '../http/schemas.js';
import {
  bodyObject, decimalSchema, fieldError, has, optionalBoolean, optionalDecimal, optionalText, requiredText, toNumber, type Body,
} from '../content/fields.js';
import { alpha2 } from './countries.js';

export const ZONE_TYPES = ['Simple', 'Weight', 'Price'] as const;
export type ZoneType = (typeof ZONE_TYPES)[number];
export const MAX_COUNTRIES = 250;

export interface ZoneRow {
  id: string;
  store_id: string;
  name: string;
  countries: string[];
  description: string;
  price_minor: number;
  type: string;
  digital_prod: boolean;
  min_weight: string | number | null;
  max_weight: string | number | null;
  min_price: string | number | null;
  max_price: string | number | null;
  created_at: Date;
  updated_at: Date;
}

export function zoneView(z: ZoneRow) {
  return {
    shippingZoneId: z.id,
    shippingName: z.name,
    zone: z.countries,
    description: z.description,
    price: formatMinor(z.price_minor)!,
    type: z.type as ZoneType, // the column's CHECK holds it to ZONE_TYPES
    digitalProd: z.digital_prod,
    minWeight: toNumber(z.min_weight),
    maxWeight: toNumber(z.max_weight),
    minPrice: toNumber(z.min_price),
    maxPrice: toNumber(z.max_price),
    storeId: z.store_id,
    createdAt: z.created_at.toISOString(),
    updatedAt: z.updated_at.toISOString(),
  };
}
export type ZoneView = ReturnType<typeof zoneView>;

/** The shipping zone (app-api.md Shipping zone), as `zoneView` writes it. */
export const ZoneSchema = Type.Object({
  shippingZoneId: Type.String({ description: 'the zone id (UUID)' }),
  shippingName: Type.String(),
  zone: Type.Array(Type.String(), { description: 'ISO 3166-1 alpha-2 country codes, upper case' }),
  description: Type.String(),
  price: Money('the flat price'),
  type: StringEnum(ZONE_TYPES),
  digitalProd: Type.Boolean(),
  minWeight: nullable(Type.Number()),
  maxWeight: nullable(Type.Number()),
  minPrice: nullable(Type.Number()),
  maxPrice: nullable(Type.Number()),
  storeId: Type.String(),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

/** The stored fields; decimals as canonical strings for the `numeric` columns. */
interface ZoneFields {
  name: string;
  countries: string[];
  description: string;
  priceMinor: number;
  type: string;
  digitalProd: boolean;
  minWeight: string | null;
  maxWeight: string | null;
  minPrice: string | null;
  maxPrice: string | null;
}

const COUNTRIES_WORDS = 'must be an array of ISO 3166-1 alpha-2 country codes';

/**
 * The zone's request body (app-api.md `POST /api/v1/shipping_zones.json`; C6.10's update), checked
 * by the route before `readZoneFields` applies the aliases, trims, checks the codes and the bounds.
 * The aliases are read only when their field is not sent (and ignored unread when it is), so
 * their schemas accept any value; the reader holds a read alias to its field's rules.
 */
export function zoneBodySchema(creating: boolean) {
  return Type.Object({
    name: Type.Optional(nullable(Type.String(), { description: `${creating ? 'required (here or as shippingName), ' : ''}not blank; trimmed, at most 255 characters` })),
    shippingName: Type.Optional(Type.Unknown({ description: 'alias of name, read only when name is not sent: then a string with its rules' })),
    countries: Type.Optional(nullable(Type.Array(Type.String()), {
      description: `ISO 3166-1 alpha-2 codes, any case (stored upper case, duplicates dropped), at most ${MAX_COUNTRIES}; null or []: none`,
      'x-error': COUNTRIES_WORDS,
    })),
    zone: Type.Optional(Type.Unknown({ description: 'alias of countries, read only when countries is not sent: then an array of codes with its rules' })),
    description: Type.Optional(nullable(Type.String(), { description: 'trimmed, at most 2000 characters; null clears it' })),
    price: Type.Optional(decimalSchema('the flat price', { scale: 2, max: 1e10 })),
    type: Type.Optional(StringEnum(ZONE_TYPES, { description: 'default Simple', 'x-error': 'must be Simple, Weight or Price' })),
    digitalProd: Type.Optional(Type.Boolean({ description: 'default true' })),
    minWeight: Type.Optional(decimalSchema('lower weight bound', { scale: 4, nullable: true, max: 1e10 })),
    maxWeight: Type.Optional(decimalSchema('upper weight bound, not below minWeight', { scale: 4, nullable: true, max: 1e10 })),
    minPrice: Type.Optional(decimalSchema('lower subtotal bound', { scale: 2, nullable: true, max: 1e10 })),
    maxPrice: Type.Optional(decimalSchema('upper subtotal bound, not below minPrice', { scale: 2, nullable: true, max: 1e10 })),
  }, { description: creating ? 'A new zone' : 'The fields sent change; the merged zone is checked whole' });
}
export type ZoneBody = Static<ReturnType<typeof zoneBodySchema>>;

/** `name` wins over its alias `shippingName`, `countries` over `zone` (docs/decisions.md). */
function aliased(body: Body, key: string, alias: string): Body {
  return has(body, key) ? body : has(body, alias) ? { ...body, [key]: body[alias] } : body;
}

function readCountries(value: unknown): string[] {
  if (!Array.isArray(value)) throw fieldError('countries', COUNTRIES_WORDS);
  if (value.length > MAX_COUNTRIES) throw fieldError('countries', `has more than ${MAX_COUNTRIES} codes`);
  const codes: string[] = [];
  const invalid: string[] = [];
  for (const v of value) {
    const code = alpha2(v);
    if (!code) invalid.push(typeof v === 'string' ? JSON.stringify(v) : String(v));
    else if (!codes.includes(code)) codes.push(code);
  }
  if (invalid.length) throw fieldError('countries', `has codes that are not ISO 3166-1 alpha-2 country codes: ${invalid.join(', ')}`);
  return codes;
}

/**
 * The fields present in `raw`, laid over `current` (a create starts from the defaults). Checks
 * each field sent, then the record as a whole (bounds in order).
 */
export function readZoneFields(raw: unknown, current: ZoneFields | null): ZoneFields {
  let body = bodyObject(raw);
  body = aliased(aliased(body, 'name', 'shippingName'), 'countries', 'zone');
  const out: ZoneFields = current
    ? { ...current }
    : { name: '', countries: [], description: '', priceMinor: 0, type: 'Simple', digitalProd: true, minWeight: null, maxWeight: null, minPrice: null, maxPrice: null };

  if (!current || has(body, 'name')) out.name = requiredText(body, 'name');
  if (has(body, 'countries')) out.countries = body.countries === null ? [] : readCountries(body.countries);
  const description = optionalText(body, 'description', { max: 2000 });
  if (description !== undefined) out.description = description ?? '';
  const price = optionalDecimal(body, 'price', { scale: 2, max: 1e10 });
  if (price !== undefined) out.priceMinor = parseMoney(price)!;
  if (has(body, 'type')) {
    if (!(ZONE_TYPES as readonly unknown[]).includes(body.type)) throw fieldError('type', 'must be Simple, Weight or Price');
    out.type = body.type as string;
  }
  const digital = optionalBoolean(body, 'digitalProd');
  if (digital !== undefined) out.digitalProd = digital;
  for (const [key, scale] of [['minWeight', 4], ['maxWeight', 4], ['minPrice', 2], ['maxPrice', 2]] as const) {
    const v = optionalDecimal(body, key, { scale, nullable: true, max: 1e10 });
    if (v !== undefined) out[key] = v;
  }
  if (out.minWeight !== null && out.maxWeight !== null && Number(out.minWeight) > Number(out.maxWeight)) {
    throw badRequest('minWeight must not be greater than maxWeight', { minWeight: ['must not be greater than maxWeight'] });
  }
  if (out.minPrice !== null && out.maxPrice !== null && Number(out.minPrice) > Number(out.maxPrice)) {
    throw badRequest('minPrice must not be greater than maxPrice', { minPrice: ['must not be greater than maxPrice'] });
  }
  return out;
}

const fieldsOf = (z: ZoneRow): ZoneFields => ({
  name: z.name,
  countries: z.countries,
  description: z.description,
  priceMinor: z.price_minor,
  type: z.type,
  digitalProd: z.digital_prod,
  minWeight: z.min_weight === null ? null : String(z.min_weight),
  maxWeight: z.max_weight === null ? null : String(z.max_weight),
  minPrice: z.min_price === null ? null : String(z.min_price),
  maxPrice: z.max_price === null ? null : String(z.max_price),
});

const values = (f: ZoneFields) => [f.name, JSON.stringify(f.countries), f.description, f.priceMinor, f.type, f.digitalProd, f.minWeight, f.maxWeight, f.minPrice, f.maxPrice];

export async function createZone(deps: Deps, storeId: string, body: ZoneBody): Promise<ZoneView> {
  const f = readZoneFields(body, null);
  const now = deps.clock.now();
  const { rows } = await deps.db.query<ZoneRow>(
    `INSERT INTO shipping_zones (name, countries, description, price_minor, type, digital_prod, min_weight, max_weight, min_price, max_price,
                                 id, store_id, created_at, updated_at)
     VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13) RETURNING *`,
    [...values(f), uuidv7(now.getTime()), storeId, now],
  );
  return zoneView(rows[0]);
}

/** A zone of this store; another store's zone, or an id that is no UUID, is simply not found. */
async function findZone(q: Queryable, storeId: string, id: string, lock = false): Promise<ZoneRow> {
  const { rows } = isUuid(id)
    ? await q.query<ZoneRow>(`SELECT * FROM shipping_zones WHERE id = $1 AND store_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, storeId])
    : { rows: [] };
  if (!rows.length) throw notFound('Shipping zone not found');
  return rows[0];
}

export async function getZone(deps: Deps, storeId: string, id: string): Promise<ZoneView> {
  return zoneView(await findZone(deps.db, storeId, id));
}

export async function updateZone(deps: Deps, storeId: string, id: string, body: ZoneBody): Promise<ZoneView> {
  return deps.db.transaction(async (tx) => {
    const current = await findZone(tx, storeId, id, true);
    const f = readZoneFields(body, fieldsOf(current));
    const { rows } = await tx.query<ZoneRow>(
      `UPDATE shipping_zones SET name = $1, countries = $2::jsonb, description = $3, price_minor = $4, type = $5, digital_prod = $6,
              min_weight = $7, max_weight = $8, min_price = $9, max_price = $10, updated_at = $11
        WHERE id = $12 RETURNING *`,
      [...values(f), deps.clock.now(), current.id],
    );
    return zoneView(rows[0]);
  });
}

export async function deleteZone(deps: Deps, storeId: string, id: string): Promise<void> {
  const { rowCount } = isUuid(id)
    ? await deps.db.query('DELETE FROM shipping_zones WHERE id = $1 AND store_id = $2', [id, storeId])
    : { rowCount: 0 };
  if (!rowCount) throw notFound('Shipping zone not found');
}

/** Newest first; the total for the envelope's `count` and `pagination`. */
export async function listZones(deps: Deps, storeId: string, page: Page): Promise<{ zones: ZoneView[]; total: number }> {
  const [{ rows }, count] = await Promise.all([
    deps.db.query<ZoneRow>(
      'SELECT * FROM shipping_zones WHERE store_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3',
      [storeId, page.limit, page.offset],
    ),
    deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM shipping_zones WHERE store_id = $1', [storeId]),
  ]);
  return { zones: rows.map(zoneView), total: count.rows[0].n };
}
