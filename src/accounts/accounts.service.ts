// Accounts (C2): signup, login, store staff and the platform-operator account.
import { randomBytes } from 'node:crypto';
import type { Deps } from '../deps.js';
import { badRequest, conflict, unauthenticated } from '../http/errors.js';
import { uuidv7 } from '../ids.js';
import { longerThan, shorterThan } from '../text.js';
import { slugify } from '../slug.js';
import { isUniqueViolation } from '../db/errors.js';
import { hashPassword, verifyPassword, DUMMY_HASH_PROMISE } from './passwords.js';
import { findStore, findUserByEmail, freeSlug, insertStore, insertUser, upsertOperator, type StoreRow, type UserRow } from './accounts.repo.js';
import type { Role } from './jwt.js';
import { beginLogin } from './login-throttle.js';
import { EMAIL_SHAPE, keptEmail, MAX_EMAIL_CHARS } from '../email.js';

const MIN_PASSWORD = 8;
/** Longest user name and store name: the platform's display-text limit (an app's name, a product's title). */
export const MAX_DISPLAY_CHARS = 255;

export const publicUser = (u: Pick<UserRow, 'id' | 'email' | 'name' | 'role'>) => ({ id: u.id, email: u.email, name: u.name, role: u.role });
export const publicStore = (s: StoreRow | null) => (s ? { id: s.id, business: s.business, storeURL: s.slug } : null);

function requireText(body: Record<string, unknown>, field: string, maxChars = MAX_DISPLAY_CHARS): string {
  const value = body[field];
  if (typeof value !== 'string' || value.trim() === '') throw badRequest(`${field} is required`);
  const text = value.trim();
  if (longerThan(text, maxChars)) throw badRequest(`${field} must be at most ${maxChars} characters`);
  return text;
}

function checkCredentials(body: Record<string, unknown>): { email: string; password: string } {
  const email = keptEmail(requireText(body, 'email', MAX_EMAIL_CHARS), (max) => badRequest(`email must be at most ${max} characters`));
  if (!EMAIL_SHAPE.test(email)) throw badRequest('email is not a valid email address');
  const password = body.password;
  // Characters (code points), as C2.1 counts them: `length` counts UTF-16 code units, so four
  // emoji would pass as eight.
  if (typeof password !== 'string' || shorterThan(password, MIN_PASSWORD)) throw badRequest(`password must be at least ${MIN_PASSWORD} characters`);
  return { email, password };
}

/**
 * The slug a store's name gives (C2.5). A name with nothing a slug can hold (Cyrillic, CJK, Arabic,
 * only punctuation: "Магазин", "日本の店") still makes a store, as a product or menu without a
 * Latin title still gets a handle: `store-` and six random hex digits (random, not numbered: slugs
 * are unique across the platform, and `store-N` would make every such signup scan all the others).
 * It was a 400 "storeName must contain letters or digits", which such a name does.
 */
function storeSlugBase(storeName: string): string {
  return slugify(storeName) || `store-${randomBytes(3).toString('hex')}`;
}

export async function signup(deps: Deps, body: Record<string, unknown>) {
  const { email, password } = checkCredentials(body);
  const name = requireText(body, 'name');
  const role = (body.role ?? 'MERCHANT') as Role;
  if (role !== 'MERCHANT' && role !== 'PARTNER') throw badRequest('role must be MERCHANT or PARTNER');
  const storeName = role === 'MERCHANT' ? requireText(body, 'storeName') : null;
  const passwordHash = await hashPassword(password);
  const now = deps.clock.now();
  const userId = uuidv7();
  const storeId = storeName ? uuidv7() : null;

  for (let attempt = 0; ; attempt++) {
    try {
      const store = await deps.db.transaction(async (tx) => {
        if (await findUserByEmail(tx, email)) throw conflict('email is already registered');
        await insertUser(tx, { id: userId, email, name, role, passwordHash, storeId: null, now });
        if (!storeName || !storeId) return null;
        const slug = await freeSlug(tx, storeSlugBase(storeName));
        await insertStore(tx, { id: storeId, business: storeName, slug, email, ownerId: userId, now });
        await tx.query('UPDATE users SET store_id = $1 WHERE id = $2', [storeId, userId]);
        return findStore(tx, storeId);
      });
      const token = await deps.jwt.sign({ id: userId, role, storeId });
      return { user: publicUser({ id: userId, email, name, role }), store: publicStore(store), token };
    } catch (err) {
      if (isUniqueViolation(err, 'users_email_key')) throw conflict('email is already registered');
      // Two signups raced for one store slug: pick the next free one.
      if (isUniqueViolation(err, 'stores_slug_key') && attempt < 5) continue;
      throw err;
    }
  }
}

/** C2.2; `clientIp` is the caller's address, for throttling failed logins (login-throttle.ts). */
export async function login(deps: Deps, body: Record<string, unknown>, clientIp: string) {
  const email = typeof body.email === 'string' ? body.email.trim() : '';
  const password = typeof body.password === 'string' ? body.password : '';
  if (!email || !password) throw badRequest('email and password are required');
  // Before anything about the account is looked at: a locked account answers the same either way.
  const attempt = await beginLogin(deps, email, clientIp);
  const user = await findUserByEmail(deps.db, email);
  // Hash even for an unknown email so the response time does not reveal which emails exist.
  const ok = await verifyPassword(password, user?.password_hash ?? (await DUMMY_HASH_PROMISE));
  if (!user || !ok) throw unauthenticated('Invalid email or password');
  await attempt.succeeded();
  const store = user.store_id ? await findStore(deps.db, user.store_id) : null;
  const token = await deps.jwt.sign({ id: user.id, role: user.role, storeId: user.store_id });
  return { token, user: publicUser(user), store: publicStore(store) };
}

export async function createStaff(deps: Deps, storeId: string, body: Record<string, unknown>) {
  const { email, password } = checkCredentials(body);
  const name = requireText(body, 'name');
  const role = body.role as Role;
  if (role !== 'STAFF_ADMIN' && role !== 'MANAGER') throw badRequest('role must be STAFF_ADMIN or MANAGER');
  const passwordHash = await hashPassword(password);
  const id = uuidv7();
  try {
    await deps.db.transaction(async (tx) => {
      if (await findUserByEmail(tx, email)) throw conflict('email is already registered');
      await insertUser(tx, { id, email, name, role, passwordHash, storeId, now: deps.clock.now() });
    });
  } catch (err) {
    if (isUniqueViolation(err, 'users_email_key')) throw conflict('email is already registered');
    throw err;
  }
  return { user: { ...publicUser({ id, email, name, role }), storeId } };
}

/**
 * SVC_ADMIN_EMAIL / SVC_ADMIN_PASSWORD: create the operator account, or reset its password. Every
 * process of a deployment does this at its start, often at the same moment: one upsert, so that
 * processes racing on an empty database all start (a look-up then an insert let all but one fail
 * on the unique email).
 */
export async function ensureOperator(deps: Deps, email: string, password: string) {
  const passwordHash = await hashPassword(password);
  return upsertOperator(deps.db, { id: uuidv7(), email: email.toLowerCase(), passwordHash, now: deps.clock.now() });
}
