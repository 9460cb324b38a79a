// Accounts and platform JWTs (contract C2): signup, login, token claims and lifetime, store staff,
// password storage. Every test makes its own users and stores; the test clock only moves forward.
import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { expectEnvelopeError } from './helpers/expect.js';
import { createStaff, signupMerchant, signupPartner } from './helpers/actors.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const uniq = () => randomBytes(5).toString('hex');
const newEmail = (prefix = 'u') => `${prefix}-${uniq()}@example.com`;

describe('C2.1 signup', () => {
  it('C2.1 a MERCHANT signup answers 201 with exactly user, store and token, and creates the store', async () => {
    const email = newEmail('m');
    const storeName = `Corner Shop ${uniq()}`;
    const res = await h.req('POST', '/auth/signup', { body: { email, password: 'correct-horse', name: 'Mia Merchant', role: 'MERCHANT', storeName } });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body).toEqual({
      status: 201,
      state: 'success',
      message: null,
      data: {
        user: { id: expect.any(String), email, name: 'Mia Merchant', role: 'MERCHANT' },
        store: { id: expect.any(String), business: storeName, storeURL: `corner-shop-${storeName.split(' ')[2]}` },
        token: expect.any(String),
      },
      count: null,
      pagination: null,
    });
    const { rows } = await h.db.query<{ business: string; slug: string; owner_id: string }>('SELECT business, slug, owner_id FROM stores WHERE id = $1', [body.data.store.id]);
    expect(rows).toEqual([{ business: storeName, slug: body.data.store.storeURL, owner_id: body.data.user.id }]);
  });

  it('C2.1 role defaults to MERCHANT; the slug is made from storeName (lowercase letters, digits, -)', async () => {
    const tag = uniq();
    const res = await h.req('POST', '/auth/signup', { body: { email: newEmail(), password: 'correct-horse', name: 'Default Role', storeName: `Élan  & Co. ${tag}!` } });
    expect(res.statusCode).toBe(201);
    const { data } = res.json();
    expect(data.user.role).toBe('MERCHANT');
    expect(data.store.storeURL).toBe(`elan-co-${tag}`);
    expect(data.store.storeURL).toMatch(/^[a-z0-9-]+$/);
    expect(data.store.business).toBe(`Élan  & Co. ${tag}!`);
  });

  it('C2.1 a PARTNER signup creates no store: store is null', async () => {
    const email = newEmail('p');
    const res = await h.req('POST', '/auth/signup', { body: { email, password: 'correct-horse', name: 'Pat Partner', role: 'PARTNER' } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      status: 201,
      state: 'success',
      message: null,
      data: { user: { id: expect.any(String), email, name: 'Pat Partner', role: 'PARTNER' }, store: null, token: expect.any(String) },
      count: null,
      pagination: null,
    });
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM stores WHERE owner_id = $1', [res.json().data.user.id]);
    expect(rows[0].n).toBe(0);
  });

  it('C2.1 two stores with the same name get distinct slugs', async () => {
    const storeName = `Twin Store ${uniq()}`;
    const a = await signupMerchant(h, { storeName });
    const b = await signupMerchant(h, { storeName });
    const c = await signupMerchant(h, { storeName });
    expect(a.slug).toBe(storeName.toLowerCase().replace(/ /g, '-'));
    expect(new Set([a.slug, b.slug, c.slug]).size).toBe(3);
    for (const s of [b.slug, c.slug]) expect(s).toMatch(new RegExp(`^${a.slug}-[a-z0-9-]+$`));
  });

  it.each([
    ['missing email', { password: 'correct-horse', name: 'N', storeName: 'S' }],
    ['invalid email', { email: 'not-an-email', password: 'correct-horse', name: 'N', storeName: 'S' }],
    ['missing password', { email: 'EMAIL', name: 'N', storeName: 'S' }],
    ['password of 7 characters', { email: 'EMAIL', password: '1234567', name: 'N', storeName: 'S' }],
    ['unknown role', { email: 'EMAIL', password: 'correct-horse', name: 'N', role: 'OWNER', storeName: 'S' }],
    ['role SUPER_ADMIN (not self-service)', { email: 'EMAIL', password: 'correct-horse', name: 'N', role: 'SUPER_ADMIN', storeName: 'S' }],
    ['role STAFF_ADMIN (staff are created by the merchant)', { email: 'EMAIL', password: 'correct-horse', name: 'N', role: 'STAFF_ADMIN', storeName: 'S' }],
    ['MERCHANT without storeName', { email: 'EMAIL', password: 'correct-horse', name: 'N', role: 'MERCHANT' }],
    ['default role without storeName', { email: 'EMAIL', password: 'correct-horse', name: 'N' }],
    ['blank storeName', { email: 'EMAIL', password: 'correct-horse', name: 'N', storeName: '   ' }],
  ])('C2.1 400 envelope for %s, and no user is created', async (_label, body: Record<string, unknown>) => {
    const email = newEmail('bad');
    const sent = { ...body, ...(body.email === 'EMAIL' ? { email } : {}) };
    const res = await h.req('POST', '/auth/signup', { body: sent });
    expectEnvelopeError(res, 400);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM users WHERE lower(email) = lower($1)', [email]);
    expect(rows[0].n).toBe(0);
  });

  it('C2.1 a password of exactly 8 characters is accepted', async () => {
    const res = await h.req('POST', '/auth/signup', { body: { email: newEmail(), password: '12345678', name: 'Eight', role: 'PARTNER' } });
    expect(res.statusCode).toBe(201);
  });

  it('C2.1 409 for an email already registered, compared case-insensitively', async () => {
    const local = `dup-${uniq()}`;
    const first = await h.req('POST', '/auth/signup', { body: { email: `${local}@example.com`, password: 'correct-horse', name: 'First', role: 'PARTNER' } });
    expect(first.statusCode).toBe(201);
    for (const email of [`${local}@example.com`, `${local.toUpperCase()}@EXAMPLE.COM`, `${local}@Example.Com`]) {
      const res = await h.req('POST', '/auth/signup', { body: { email, password: 'other-password', name: 'Second', storeName: `Dup ${uniq()}` } });
      expectEnvelopeError(res, 409);
    }
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM users WHERE lower(email) = lower($1)', [`${local}@example.com`]);
    expect(rows[0].n).toBe(1);
    // The refused MERCHANT signups left no store behind either.
    const stores = await h.db.query(`SELECT count(*)::int AS n FROM stores WHERE business LIKE 'Dup %' AND email = $1`, [`${local}@example.com`]);
    expect(stores.rows[0].n).toBe(0);
  });

  it('C2.1 malformed JSON -> 400 envelope', async () => {
    const res = await h.req('POST', '/auth/signup', { payload: '{"email": ', headers: { 'content-type': 'application/json' } });
    expectEnvelopeError(res, 400);
  });
});

describe('C2.2 login', () => {
  it('C2.2 200 envelope with token, user and store', async () => {
    const m = await signupMerchant(h);
    const res = await h.req('POST', '/auth/login', { body: { email: m.email, password: 'correct-horse' } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      status: 200,
      state: 'success',
      message: null,
      data: {
        token: expect.any(String),
        user: { id: m.userId, email: m.email, name: 'Merchant', role: 'MERCHANT' },
        store: { id: m.storeId, business: expect.any(String), storeURL: m.slug },
      },
      count: null,
      pagination: null,
    });
    // The token works on a protected route.
    const me = await h.req('GET', '/apps/installations', { token: body.data.token });
    expect(me.statusCode).toBe(200);
  });

  it('C2.2 a partner logs in with store null; the email is matched case-insensitively', async () => {
    const p = await signupPartner(h);
    const res = await h.req('POST', '/auth/login', { body: { email: p.email.toUpperCase(), password: 'correct-horse' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ token: expect.any(String), user: { id: p.userId, email: p.email, name: 'Partner', role: 'PARTNER' }, store: null });
  });

  it('C2.2 401 with one and the same message for a wrong email and a wrong password', async () => {
    const m = await signupMerchant(h);
    const wrongPassword = expectEnvelopeError(await h.req('POST', '/auth/login', { body: { email: m.email, password: 'wrong-horse' } }), 401);
    const wrongEmail = expectEnvelopeError(await h.req('POST', '/auth/login', { body: { email: newEmail('nobody'), password: 'correct-horse' } }), 401);
    expect(wrongEmail.message).toBe(wrongPassword.message);
    // The message does not say which of the two was wrong.
    expect(wrongPassword.message.toLowerCase()).not.toMatch(/not found|no such|unknown user|does not exist/);
  });

  it('C2.2 400 envelope when email or password is missing', async () => {
    expectEnvelopeError(await h.req('POST', '/auth/login', { body: { email: newEmail() } }), 400);
    expectEnvelopeError(await h.req('POST', '/auth/login', { body: { password: 'correct-horse' } }), 400);
  });
});

describe('C2.3 platform JWT', () => {
  it('C2.3 merchant token claims: sub, role, storeId, iss = site_url, exp - iat = 12 h, HS256', async () => {
    const m = await signupMerchant(h);
    const login = await h.req('POST', '/auth/login', { body: { email: m.email, password: 'correct-horse' } });
    for (const token of [m.token, login.json().data.token]) {
      const claims = decodeJwt(token);
      expect(claims.sub).toBe(m.userId);
      expect(claims.role).toBe('MERCHANT');
      expect(claims.storeId).toBe(m.storeId);
      expect(claims.iss).toBe(h.config.siteUrl);
      expect(typeof claims.iat).toBe('number');
      expect(claims.exp! - claims.iat!).toBe(12 * 3600);
      expect(Math.abs(claims.iat! - Math.floor(h.clock.nowMs() / 1000))).toBeLessThan(120);
      const header = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString());
      expect(header.alg).toBe('HS256');
    }
  });

  it('C2.3 partner token has no storeId', async () => {
    const p = await signupPartner(h);
    const claims = decodeJwt(p.token);
    expect(claims.sub).toBe(p.userId);
    expect(claims.role).toBe('PARTNER');
    expect(claims.storeId).toBeUndefined();
    expect(claims.iss).toBe(h.config.siteUrl);
  });

  it('C2.3 staff token carries the store id of the merchant', async () => {
    const m = await signupMerchant(h);
    const staff = await createStaff(h, m.token, 'MANAGER');
    const claims = decodeJwt(staff.token);
    expect(claims.role).toBe('MANAGER');
    expect(claims.storeId).toBe(m.storeId);
  });

  it('C2.3 401 for a tampered, foreign-key or malformed token', async () => {
    const m = await signupMerchant(h);
    const [head, payload, sig] = m.token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(m.token), role: 'SUPER_ADMIN' })).toString('base64url');
    for (const token of [`${head}.${forged}.${sig}`, `${head}.${payload}.${sig.slice(0, -2)}xx`, 'not-a-jwt']) {
      expectEnvelopeError(await h.req('GET', '/apps/installations', { token }), 401);
    }
    expectEnvelopeError(await h.req('GET', '/apps/installations'), 401);
  });

  it('C2.3 a token is accepted until 12 h and refused (401) at 12 h + 1 s', async () => {
    const m = await signupMerchant(h);
    const p = await signupPartner(h);
    expect((await h.req('GET', '/apps/installations', { token: m.token })).statusCode).toBe(200);
    expect((await h.req('GET', '/apps/developer/apps', { token: p.token })).statusCode).toBe(200);
    await h.advance(12 * 3600 + 1);
    expectEnvelopeError(await h.req('GET', '/apps/installations', { token: m.token }), 401);
    expectEnvelopeError(await h.req('GET', '/apps/developer/apps', { token: p.token }), 401);
    // Logging in again gives a working token.
    const again = await h.req('POST', '/auth/login', { body: { email: m.email, password: 'correct-horse' } });
    expect((await h.req('GET', '/apps/installations', { token: again.json().data.token })).statusCode).toBe(200);
  });
});

describe('C2.4 store staff', () => {
  it('C2.4 a MERCHANT creates STAFF_ADMIN and MANAGER staff (201) who then log in with the store', async () => {
    const m = await signupMerchant(h);
    for (const role of ['STAFF_ADMIN', 'MANAGER'] as const) {
      const email = newEmail('staff');
      const res = await h.req('POST', '/stores/staff', { token: m.token, body: { email, password: 'staff-password', name: `A ${role}`, role } });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(body).toMatchObject({ status: 201, state: 'success', message: null, count: null, pagination: null });
      expect(body.data.user).toMatchObject({ id: expect.any(String), email, name: `A ${role}`, role });
      expect(JSON.stringify(body)).not.toContain('staff-password');

      const login = await h.req('POST', '/auth/login', { body: { email, password: 'staff-password' } });
      expect(login.statusCode).toBe(200);
      expect(login.json().data.user).toEqual({ id: body.data.user.id, email, name: `A ${role}`, role });
      expect(login.json().data.store).toEqual({ id: m.storeId, business: expect.any(String), storeURL: m.slug });
      // Staff act for the store on merchant routes.
      expect((await h.req('GET', '/apps/installations', { token: login.json().data.token })).statusCode).toBe(200);
    }
  });

  it('C2.4 403 for a PARTNER and for store staff; 401 without a token', async () => {
    const m = await signupMerchant(h);
    const p = await signupPartner(h);
    const staffAdmin = await createStaff(h, m.token, 'STAFF_ADMIN');
    const manager = await createStaff(h, m.token, 'MANAGER');
    const body = () => ({ email: newEmail('x'), password: 'staff-password', name: 'X', role: 'MANAGER' });
    expectEnvelopeError(await h.req('POST', '/stores/staff', { token: p.token, body: body() }), 403);
    expectEnvelopeError(await h.req('POST', '/stores/staff', { token: staffAdmin.token, body: body() }), 403);
    expectEnvelopeError(await h.req('POST', '/stores/staff', { token: manager.token, body: body() }), 403);
    expectEnvelopeError(await h.req('POST', '/stores/staff', { body: body() }), 401);
  });

  it.each([['MERCHANT'], ['PARTNER'], ['SUPER_ADMIN'], ['CASHIER'], [undefined]])('C2.4 400 for staff role %s', async (role) => {
    const m = await signupMerchant(h);
    const email = newEmail('staff');
    const res = await h.req('POST', '/stores/staff', { token: m.token, body: { email, password: 'staff-password', name: 'S', ...(role ? { role } : {}) } });
    expectEnvelopeError(res, 400);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM users WHERE email = $1', [email]);
    expect(rows[0].n).toBe(0);
  });

  it('C2.4 400 for a short password or bad email; 409 for an email already registered', async () => {
    const m = await signupMerchant(h);
    expectEnvelopeError(await h.req('POST', '/stores/staff', { token: m.token, body: { email: newEmail(), password: 'short', name: 'S', role: 'MANAGER' } }), 400);
    expectEnvelopeError(await h.req('POST', '/stores/staff', { token: m.token, body: { email: 'nope', password: 'staff-password', name: 'S', role: 'MANAGER' } }), 400);
    expectEnvelopeError(await h.req('POST', '/stores/staff', { token: m.token, body: { email: m.email.toUpperCase(), password: 'staff-password', name: 'S', role: 'MANAGER' } }), 409);
  });
});

describe('C2.6 password storage', () => {
  it('C2.6 passwords are stored as scrypt hashes with a per-user salt and never returned', async () => {
    const password = `pw-${uniq()}-secret`;
    const emailA = newEmail('hash');
    const emailB = newEmail('hash');
    const signupA = await h.req('POST', '/auth/signup', { body: { email: emailA, password, name: 'Hash A', storeName: `Hash ${uniq()}` } });
    const signupB = await h.req('POST', '/auth/signup', { body: { email: emailB, password, name: 'Hash B', role: 'PARTNER' } });
    const loginA = await h.req('POST', '/auth/login', { body: { email: emailA, password } });
    const staffEmail = newEmail('hash-staff');
    const staff = await h.req('POST', '/stores/staff', { token: signupA.json().data.token, body: { email: staffEmail, password, name: 'Hash S', role: 'MANAGER' } });
    expect([signupA.statusCode, signupB.statusCode, loginA.statusCode, staff.statusCode]).toEqual([201, 201, 200, 201]);

    for (const res of [signupA, signupB, loginA, staff]) {
      expect(res.body).not.toContain(password);
      expect(res.body).not.toMatch(/password/i);
      expect(res.body).not.toContain('scrypt$');
    }

    const { rows } = await h.db.query<{ email: string; password_hash: string }>(
      'SELECT email, password_hash FROM users WHERE email = ANY($1) ORDER BY email', [[emailA, emailB, staffEmail]],
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row.password_hash).not.toContain(password);
      expect(row.password_hash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
      const [, n] = row.password_hash.split('$');
      expect(Number(n)).toBeGreaterThanOrEqual(16384);
    }
    // Same password, different salts: different hashes.
    expect(new Set(rows.map((r) => r.password_hash)).size).toBe(3);
  });
});
