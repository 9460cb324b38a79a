// Text is compared as it is kept, on both databases. Emails are kept lower-cased by JavaScript
// (src/email.ts), and PostgreSQL's lower() is not JavaScript's: it lower-cases 'İ' (U+0130) to a
// plain 'i' where JavaScript gives 'i' + U+0307, and PGlite leaves 'Ⓐ' (U+24B6) as it is where
// PostgreSQL and JavaScript give 'ⓐ'. So a lookup `lower(email) = lower($1)` of an email named as
// the customer gave it missed the customer (a GDPR erasure left them whole), or found them on one
// database and not the other; and the discount list's `code` filter, lower-cased by JavaScript
// against the SQL lower() of the code, did not find a discount by its own code.
// A sweep over each lookup of text named "in any case" with such letters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers/harness.js';
import { createHarness } from './helpers/harness.js';
import { operatorToken, signupMerchant, storeWithApp } from './helpers/actors.js';
import { uniq } from './helpers/orders.js';
import { sendMail } from '../src/mail/mail.js';
import { gdprDispatcher } from '../src/gdpr/gdpr.dispatch.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

/** Letters whose lower case JavaScript and one of the databases see differently. */
const LETTERS = ['İ', 'Ⓐ'];

describe('an email named in any case finds the kept one, on both databases', () => {
  it('GDPR requests by customerEmail find the customer with that email, and a customer redact erases it', async () => {
    const m = await signupMerchant(h);
    const missed: string[] = [];
    for (const letter of LETTERS) {
      for (const type of ['data-request', 'customer-redact'] as const) {
        const email = `${letter}pek-${uniq()}@example.com`;
        const created = await h.req('POST', '/customers', { token: m.token, body: { email, first_name: 'İpek' } });
        expect(created.statusCode, created.body).toBe(201);
        const customerId = created.json().data.id as string;
        const res = await h.req('POST', `/apps/gdpr/${type}`, { token: m.token, body: { customerEmail: email } });
        expect(res.statusCode, res.body).toBeLessThan(300);
        const view = (await h.req('GET', `/apps/gdpr/requests/${res.json().data.requestId}`, { token: m.token })).json().data;
        if (view.customerId !== customerId) missed.push(`${type} ${letter}: customerId ${view.customerId}, not ${customerId}`);
        if (type === 'customer-redact') {
          await gdprDispatcher(h.deps).settle(); // no app to notify: the erasure follows the response
          const { rows } = await h.deps.db.query<{ email: string }>('SELECT email FROM customers WHERE id = $1', [customerId]);
          if (!rows[0].email.endsWith('@redacted.invalid')) missed.push(`customer-redact ${letter}: the customer keeps ${rows[0].email}`);
        }
      }
    }
    expect(missed).toEqual([]);
  });

  it('the email log filter finds a mail to a kept email by the address as written', async () => {
    const ops = await operatorToken(h);
    const missed: string[] = [];
    for (const letter of LETTERS) {
      const written = `${letter}lker-${uniq()}@example.com`;
      await sendMail(h.deps, { to: written.toLowerCase(), subject: 'Hi', template: 'test', text: 'Hi' });
      const res = await h.req('GET', `/apps/admin/emails?to=${encodeURIComponent(written)}`, { token: ops });
      expect(res.statusCode, res.body).toBe(200);
      if (res.json().data.emails.length !== 1) missed.push(`${letter}: ${res.json().data.emails.length} mails`);
    }
    expect(missed).toEqual([]);
  });
});

describe('a discount is found by its own code', () => {
  it('the list filter `code` matches the code as it was created, and a part of it', async () => {
    const s = await storeWithApp(h, { scopes: ['read_discounts'], tier: 'enterprise' });
    const missed: string[] = [];
    for (const letter of LETTERS) {
      const code = `${letter}ND-${uniq()}`;
      const created = await h.req('POST', '/discounts', { token: s.merchant.token, body: { code, type: 'Percentage', discountPercentage: '10' } });
      expect(created.statusCode, created.body).toBeLessThan(300);
      for (const query of [code, code.slice(0, 3), `${letter}nd`]) {
        const res = await h.req('GET', `/api/v1/discounts.json?code=${encodeURIComponent(query)}`, { token: s.accessToken });
        expect(res.statusCode, res.body).toBe(200);
        const codes = (res.json().data.discounts as { code: string }[]).map((d) => d.code);
        if (!codes.includes(code)) missed.push(`${code} by ${query}: ${JSON.stringify(codes)}`);
      }
    }
    expect(missed).toEqual([]);
  });
});
