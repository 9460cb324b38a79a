import type { Queryable } from '../db/db.js';
import type { Role } from './jwt.js';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  password_hash: string;
  store_id: string | null;
  created_at: Date;
}

export interface StoreRow {
  id: string;
  business: string;
  slug: string;
  email: string;
  owner_id: string;
  currency: string;
  created_at: Date;
}

/**
 * Emails are stored lower-cased by JavaScript, and the failed-login throttle keys an account by
 * that same lower-casing: look it up by exactly that spelling. PostgreSQL's lower() alone differs
 * (U+0130 "İ" becomes a plain "i" there, "i" + U+0307 in JavaScript), which let a login reach an
 * account under another throttle key, and sent an account whose email has an İ to someone else's.
 * lower() is kept on both sides so the unique index on lower(email) serves the lookup.
 */
export const findUserByEmail = async (q: Queryable, email: string) =>
  (await q.query<UserRow>('SELECT * FROM users WHERE lower(email) = lower($1)', [email.toLowerCase()])).rows[0] ?? null;

export const findStore = async (q: Queryable, id: string) =>
  (await q.query<StoreRow>('SELECT * FROM stores WHERE id = $1', [id])).rows[0] ?? null;

export const storeExists = async (q: Queryable, id: string) => (await q.query('SELECT 1 FROM stores WHERE id = $1', [id])).rows.length > 0;

export async function insertUser(q: Queryable, u: { id: string; email: string; name: string; role: Role; passwordHash: string; storeId: string | null; now: Date }) {
  await q.query(
    `INSERT INTO users (id, email, name, role, password_hash, store_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
    [u.id, u.email, u.name, u.role, u.passwordHash, u.storeId, u.now],
  );
}

/** The operator account by email (any case): inserted, or made SUPER_ADMIN with this password. Its id. */
export async function upsertOperator(q: Queryable, u: { id: string; email: string; passwordHash: string; now: Date }): Promise<string> {
  const { rows } = await q.query<{ id: string }>(
    `INSERT INTO users (id, email, name, role, password_hash, store_id, created_at, updated_at)
     VALUES ($1, $2, 'Platform operator', 'SUPER_ADMIN', $3, NULL, $4, $4)
     ON CONFLICT ((lower(email))) DO UPDATE SET password_hash = EXCLUDED.password_hash, role = 'SUPER_ADMIN', updated_at = EXCLUDED.updated_at
     RETURNING id`,
    [u.id, u.email, u.passwordHash, u.now],
  );
  return rows[0].id;
}

export async function insertStore(q: Queryable, s: { id: string; business: string; slug: string; email: string; ownerId: string; now: Date }) {
  await q.query(
    `INSERT INTO stores (id, business, slug, email, owner_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
    [s.id, s.business, s.slug, s.email, s.ownerId, s.now],
  );
}

/** The slug itself when free, else the first free `slug-N`. The unique index settles races. */
export async function freeSlug(q: Queryable, base: string): Promise<string> {
  const { rows } = await q.query<{ slug: string }>(`SELECT slug FROM stores WHERE slug = $1 OR slug LIKE $1 || '-%'`, [base]);
  const taken = new Set(rows.map((r) => r.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}
