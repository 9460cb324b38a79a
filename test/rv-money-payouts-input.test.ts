// Review: text a developer or the operator sends to the payout routes is bounded (C10.4, C10.7):
// unbounded, a payout method of up to the 1 MB body limit was stored, shown back, and copied onto
// every payout as its snapshot; a failure reason of that size became the payout's failureReason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { developer, install, merchant, operator, paidApp } from './helpers/billing.js';
import { runBillingCharges } from '../src/billing/charges.js';
import { runPayoutSweep } from '../src/payouts/payouts.js';

let h: Harness;
let ops: () => Promise<string>;
beforeAll(async () => {
  h = await createHarness();
  ops = await operator(h);
});
afterAll(() => h?.close());

const putMethod = async (token: string, body: Record<string, unknown>) => h.req('PUT', '/apps/developer/payout-method', { token, body });

describe('C10.4 payout method texts are bounded', () => {
  it('an account holder over 255 characters or a PayPal email over 254 is a 400 envelope; at the bound it is kept', async () => {
    const dev = await developer(h);
    const token = await dev.token();
    const bank = { type: 'bank', accountNumber: '12345678', routingNumber: '021000021' };
    const long = await putMethod(token, { ...bank, accountHolder: 'A'.repeat(256) });
    expect(long.statusCode, long.body).toBe(400);
    expect(long.json()).toMatchObject({ status: 400, state: 'error', message: 'accountHolder is at most 255 characters', data: null });
    const huge = await putMethod(token, { ...bank, accountHolder: 'A'.repeat(500_000) });
    expect(huge.statusCode).toBe(400);
    const ok = await putMethod(token, { ...bank, accountHolder: ` ${'A'.repeat(255)} ` });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data.payoutMethod.accountHolder).toBe('A'.repeat(255));

    const email = await putMethod(token, { type: 'paypal', email: `${'a'.repeat(245)}@example.com` });
    expect(email.statusCode, email.body).toBe(400);
    expect(email.json().message).toBe('email is at most 254 characters');
    expect((await putMethod(token, { type: 'paypal', email: `${'a'.repeat(242)}@example.com` })).statusCode).toBe(200);
  });
});

describe('C10.7 the operator fail reason is bounded', () => {
  it('a reason over 1000 characters is a 400 and the payout stays pending; 1000 characters fail it', async () => {
    const dev = await developer(h);
    expect((await putMethod(await dev.token(), { type: 'paypal', email: 'dev@example.com' })).statusCode).toBe(200);
    const app = await paidApp(h, dev, { amount: '100.00' });
    await install(h, await merchant(h), app);
    await runBillingCharges(h.deps, { developerIds: [dev.userId] });
    const { payouts } = await runPayoutSweep(h.deps, { force: true, developerIds: [dev.userId] });
    expect(payouts).toHaveLength(1);
    const id = payouts[0].id;

    const token = await ops();
    const long = await h.req('POST', `/apps/admin/payouts/${id}/fail`, { token, body: { reason: 'x'.repeat(200_000) } });
    expect(long.statusCode, long.body.slice(0, 300)).toBe(400);
    expect(long.json()).toMatchObject({ state: 'error', message: 'reason is at most 1000 characters' });
    const { rows } = await h.db.query<{ status: string }>('SELECT status FROM payouts WHERE id = $1', [id]);
    expect(rows[0].status).toBe('pending');

    const failed = await h.req('POST', `/apps/admin/payouts/${id}/fail`, { token, body: { reason: 'y'.repeat(1000) } });
    expect(failed.statusCode, failed.body.slice(0, 300)).toBe(200);
    expect(failed.json().data.payout).toMatchObject({ status: 'failed', failureReason: 'y'.repeat(1000) });
  });
});
