// The store's address (C15.4): what the merchant saved with `PUT /stores/address`, and the origin
// of shipping apps' rate requests (C15.3). A store that never saved one has every field null.
import type { Queryable } from '../db/db.js';
import type { Deps } from '../deps.js';
import { fieldError } from '../content/fields.js';
import { alpha2 } from '../shipping/countries.js';

export const ADDRESS_FIELDS = ['address1', 'address2', 'city', 'province', 'country', 'zip', 'phone'] as const;
export type AddressField = (typeof ADDRESS_FIELDS)[number];
export type StoreAddress = Record<AddressField, string | null>;

/** A store that never saved an address: every field unknown. Shared: copy it before changing a field. */
export const NO_STORE_ADDRESS: Readonly<StoreAddress> = Object.freeze({ address1: null, address2: null, city: null, province: null, country: null, zip: null, phone: null });

export async function findStoreAddress(q: Queryable, storeId: string): Promise<StoreAddress> {
  const { rows } = await q.query<StoreAddress>(
    'SELECT address1, address2, city, province, country, zip, phone FROM store_addresses WHERE store_id = $1',
    [storeId],
    { name: 'store_address_find' },
  );
  return rows[0] ?? { ...NO_STORE_ADDRESS };
}

/**
 * The address as sent, read for saving: a `PUT` replaces the whole address, so a field left out is
 * null (unknown), as is a blank one. Types and lengths are the route schema's; here the rules it
 * cannot say: trimming, and `country` an assigned ISO 3166-1 alpha-2 code (kept upper case).
 */
export function readStoreAddress(body: Partial<Record<AddressField, string | null>>): StoreAddress {
  const out = { ...NO_STORE_ADDRESS };
  for (const key of ADDRESS_FIELDS) {
    const text = body[key]?.trim();
    out[key] = text ? text : null;
  }
  if (out.country !== null) {
    const code = alpha2(out.country);
    if (!code) throw fieldError('country', 'must be an ISO 3166-1 alpha-2 country code');
    out.country = code;
  }
  return out;
}

export async function saveStoreAddress(deps: Deps, storeId: string, address: StoreAddress): Promise<StoreAddress> {
  const { rows } = await deps.db.query<StoreAddress>(
    `INSERT INTO store_addresses (store_id, address1, address2, city, province, country, zip, phone, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (store_id) DO UPDATE SET address1 = EXCLUDED.address1, address2 = EXCLUDED.address2, city = EXCLUDED.city,
       province = EXCLUDED.province, country = EXCLUDED.country, zip = EXCLUDED.zip, phone = EXCLUDED.phone, updated_at = EXCLUDED.updated_at
     RETURNING address1, address2, city, province, country, zip, phone`,
    [storeId, ...ADDRESS_FIELDS.map((k) => address[k]), deps.clock.now()],
  );
  return rows[0];
}
