// Edge cases of the dashboard (issue 15) and of accounts (C2): odd input a person or a crafted link
// can send, through the same pages and API a browser or client uses. Each test names the rule it
// holds the service to.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp, signupMerchant, signupPartner, unique } from './helpers/actors.js';
import { Browser, csrfOf } from './helpers/dashboard.js';
import { LOGIN_LIMITS } from '../src/accounts/login-throttle.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const PASSWORD = 'correct-horse';
/** A client address of the test's own (10/8), so no other test's failures count against it. */
const newIp = () => `10.${[...randomBytes(3)].join('.')}`;

async function signedIn(email: string) {
  const browser = new Browser(h);
  const res = await browser.signIn(email, PASSWORD);
  expect(res.status, res.html).toBe(303);
  return browser;
}

describe('sign-in: where it leads next', () => {
  // `next` is only ever a /dashboard path (docs/decisions.md, "Authorization"); one that cannot be
  // written in a Location header (a character outside printable ASCII) is no such path: it leads
  // to /dashboard, never to a 500 page.
  const odd = ['/dashboard/\u0101', '/dashboard/apps\u0001', '/dashboard/\u2028x', '/dashboard/apps?topic=\u{1F600}'];

  it('a signed-in visitor opening the login page with an odd `next` goes to the dashboard (303), not a 500', async () => {
    const partner = await signupPartner(h);
    const browser = await signedIn(partner.email);
    for (const next of odd) {
      const res = await browser.get(`/dashboard/login?next=${encodeURIComponent(next)}`);
      expect([next, res.status, res.location]).toEqual([next, 303, '/dashboard']);
    }
  });

  it('signing in through a form whose `next` is odd leads to the dashboard (303) with the session, not a 500', async () => {
    const partner = await signupPartner(h);
    for (const next of odd) {
      const browser = new Browser(h);
      const page = await browser.get('/dashboard/login');
      const res = await browser.post('/dashboard/login', { _csrf: csrfOf(page.html), email: partner.email, password: PASSWORD, next });
      expect([next, res.status, res.location]).toEqual([next, 303, '/dashboard']);
      expect((await browser.get('/dashboard/apps')).status).toBe(200);
    }
  });
});

describe('failed-login throttle (C2.2; docs/decisions.md "Hardening: SSRF and login throttling")', () => {
  // The account's counter is keyed by the email trimmed and lower-cased in JavaScript; the account
  // must be looked up by that very spelling. PostgreSQL's lower() maps U+0130 (İ) to a plain "i",
  // where JavaScript makes it "i" + U+0307: without this, "İ" in place of an "i" reached the
  // locked account under a fresh counter, with five more guesses per "i" of the address.
  it('a locked account stays locked for a spelling of its email with İ in place of an i', async () => {
    const email = `li-${unique()}@example.com`;
    expect((await h.req('POST', '/auth/signup', { body: { email, password: PASSWORD, name: 'T', role: 'PARTNER' } })).statusCode).toBe(201);
    const login = async (address: string, password: string) =>
      (await h.app.inject({ method: 'POST', url: '/auth/login', remoteAddress: newIp(), headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: address, password }) })).statusCode;
    for (let i = 0; i < LOGIN_LIMITS.account.limit; i++) expect(await login(email, 'wrong-password')).toBe(401);
    expect(await login(email, PASSWORD)).toBe(429);
    // Not this account: the right password does not open it under another spelling.
    const lookalike = email.replace('i', '\u0130');
    expect(await login(lookalike, PASSWORD)).toBe(401);
    // Nor does the dashboard's form, which uses the same login.
    const browser = new Browser(h);
    const page = await browser.get('/dashboard/login');
    const res = await browser.post('/dashboard/login', { _csrf: csrfOf(page.html), email: lookalike, password: PASSWORD });
    expect(res.status).toBe(401);
    expect((await browser.get('/dashboard/apps')).status).toBe(303);
  });

  it('an account signed up with İ in its email logs in with the email as typed, and is not another account', async () => {
    const tag = unique();
    const plain = `li-${tag}@example.com`;
    const dotted = `l\u0130-${tag}@example.com`;
    const first = await h.req('POST', '/auth/signup', { body: { email: plain, password: PASSWORD, name: 'Plain', role: 'PARTNER' } });
    const second = await h.req('POST', '/auth/signup', { body: { email: dotted, password: 'another-password', name: 'Dotted', role: 'PARTNER' } });
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    const res = await h.app.inject({ method: 'POST', url: '/auth/login', remoteAddress: newIp(), headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: dotted, password: 'another-password' }) });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user.id).toBe(second.json().data.user.id);
  });
});

describe('password rules (C2.1, C2.4)', () => {
  // "password under 8 characters" -> 400: characters, not UTF-16 code units (an emoji is two).
  it('a password of four emoji (eight UTF-16 code units) is under 8 characters: 400, for signup and for staff', async () => {
    const short = '\u{1F600}\u{1F601}\u{1F602}\u{1F603}';
    const signup = await h.req('POST', '/auth/signup', { body: { email: `e-${unique()}@example.com`, password: short, name: 'E', role: 'PARTNER' } });
    expect(signup.statusCode).toBe(400);
    expect(signup.json().message).toBe('password must be at least 8 characters');
    const merchant = await signupMerchant(h);
    const staff = await h.req('POST', '/stores/staff', { token: merchant.token, body: { email: `s-${unique()}@example.com`, password: short, name: 'S', role: 'MANAGER' } });
    expect(staff.statusCode).toBe(400);
    // Eight emoji are eight characters.
    const ok = await h.req('POST', '/auth/signup', { body: { email: `e-${unique()}@example.com`, password: short + short, name: 'E', role: 'PARTNER' } });
    expect(ok.statusCode).toBe(201);
  });
});

describe('paging keeps the page size', () => {
  it('the pager\'s links carry the `limit` the page was opened with', async () => {
    const partner = await signupPartner(h);
    for (let i = 0; i < 3; i++) await createTestApp(h, partner.token, { name: `Paged ${i} ${unique()}` });
    const browser = await signedIn(partner.email);
    const first = await browser.get('/dashboard/apps?limit=1');
    expect(first.html).toContain('3 in all · page 1 of 3');
    const next = /href="([^"]+)" rel="next"/.exec(first.html)?.[1].replaceAll('&amp;', '&');
    expect(next).toBeDefined();
    const second = await browser.get(next!);
    expect(second.html).toContain('3 in all · page 2 of 3');
    const prev = /href="([^"]+)" rel="prev"/.exec(second.html)?.[1].replaceAll('&amp;', '&');
    expect((await browser.get(prev!)).html).toContain('3 in all · page 1 of 3');
  });
});

describe('store address form (C15.4)', () => {
  // The API's schema holds each field to 255 characters, counted as characters (code points); the
  // page checks the same, so it does not refuse an address the API takes.
  it('a city of 200 characters outside the BMP is saved by the page as by the API', async () => {
    const merchant = await signupMerchant(h);
    const browser = await signedIn(merchant.email);
    const city = '\u{20BB7}'.repeat(200); // 200 characters, 400 UTF-16 code units
    const api = await h.req('PUT', '/stores/address', { token: merchant.token, body: { country: 'JP', city } });
    expect(api.statusCode).toBe(200);
    const res = await browser.submit('/dashboard/store/address', '/dashboard/store/address', { address1: '', address2: '', city, province: '', country: 'JP', zip: '', phone: '' });
    expect(res.status, res.html).toBe(303);
    const tooLong = await browser.submit('/dashboard/store/address', '/dashboard/store/address', { address1: '', address2: '', city: '\u{20BB7}'.repeat(256), province: '', country: 'JP', zip: '', phone: '' });
    expect(tooLong.status).toBe(400);
    expect(tooLong.html).toContain('id="city-error">is too long (maximum 255 characters)');
  });
});
