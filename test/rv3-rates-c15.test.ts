// Review of shipping rates (C15.2-C15.4), third round: each test failed before its fix
// (docs/decisions.md, "A third review of checkout and rates").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { checkoutCalls, checkoutWithShippingApp } from './helpers/checkout.js';
import { parseRateReply, readRateReply } from '../src/checkout/rate-reply.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

const { rates } = checkoutCalls(() => h);

/**
 * Letters whose Unicode upper case is ASCII: `ſ` (long s) -> `S`, `ı` (dotless i) -> `I`. A rate in
 * `uſd` or `ınr` is in no ISO 4217 currency, so in another currency than the checkout's (C15.3).
 */
const LOOKALIKES: [string, string][] = [['uſd', 'USD'], ['ınr', 'INR'], ['UſD', 'USD'], ['ſek', 'SEK']];

describe("a rate's currency is the checkout's only when it is that ISO 4217 code, in either case (C15.3)", () => {
  it('a code that only Unicode case mapping turns into it (uſd, ınr) is another currency: the rate is dropped (was offered)', () => {
    for (const [sent, currency] of LOOKALIKES) {
      const body = JSON.stringify({ rates: [{ service_name: 'Odd', service_code: 'odd', total_price: 5, currency: sent }, { service_name: 'Std', service_code: 'std', total_price: 7, currency: currency.toLowerCase() }] });
      expect(parseRateReply(body, currency)?.map((r) => r.service_code), sent).toEqual(['std']);
      const dropped: string[] = [];
      readRateReply(body, currency, (_i, reason) => dropped.push(reason));
      expect(dropped).toEqual([`rates[0]: currency ${JSON.stringify(sent)} is not the checkout's ${currency}`]);
    }
  });

  it("through a checkout's quote: the app's rate in `uſd` is not offered, its `usd` one is", async () => {
    const { rx, s, app, token } = await checkoutWithShippingApp(h, [
      { service_name: 'Odd', service_code: 'odd', total_price: 500, currency: 'uſd' },
      { service_name: 'Std', service_code: 'std', total_price: 700, currency: 'usd' },
    ]);
    try {
      const offered = await rates(s, token);
      expect(offered.statusCode, offered.body).toBe(200);
      expect(offered.json().data.shipping_rates.map((r: any) => [r.handle, r.price])).toEqual([[`app-${app.handle}-std`, '7.00']]);
    } finally {
      await rx.close();
    }
  });
});
