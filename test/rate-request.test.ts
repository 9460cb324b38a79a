// A rate request's inputs (src/checkout/rate-request.ts `rateRequestInputs`) decide whether a
// checkout's last quote of the shipping apps is reused without building its body (rate-memo.ts):
// two requests with the same inputs must have the same body, or a buyer would be given the rates
// of another request (C15.3). Checked by changing one field at a time, every field of the origin,
// the destination and the items (the examples are typed whole, so a field added to those types
// fails to compile here until it is added) and the currency and the number of items.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rateRequestBody, rateRequestInputs, sameInputs, type RateItem, type RateRequest } from '../src/checkout/rate-request.js';
import { ADDRESS_KEYS, type Address } from '../src/orders/order-view.js';
import { ADDRESS_FIELDS, type StoreAddress } from '../src/stores/store-address.js';

const text = fc.constantFrom(null, '', ' ', 'a', 'A', ' a', 'b', 'é');
const count = fc.constantFrom(0, 1, 2, 500);
const id = fc.constantFrom(null, 1, 2);

const origin = fc.record(Object.fromEntries(ADDRESS_FIELDS.map((k) => [k, text])) as Record<keyof StoreAddress, typeof text>);
const destination = fc.record(Object.fromEntries(ADDRESS_KEYS.map((k) => [k, text])) as Record<keyof Address, typeof text>);
const itemFields = {
  name: fc.constantFrom('Mug', 'Mug - Blue', ''),
  sku: text,
  quantity: count,
  grams: count,
  priceMinor: count,
  requiresShipping: fc.boolean(),
  productId: id,
  variantId: id,
} satisfies Record<keyof RateItem, fc.Arbitrary<unknown>>;
const item = fc.record(itemFields) as fc.Arbitrary<RateItem>;
const request = fc.record({ origin, destination, items: fc.array(item, { minLength: 1, maxLength: 3 }), currency: fc.constantFrom('USD', 'EUR', 'JPY') }) as fc.Arbitrary<RateRequest>;

/** The request with one thing changed: a field of the origin, the destination or an item, the currency, or the items' number. */
const changed = (r: RateRequest) =>
  fc.oneof(
    fc.tuple(fc.constantFrom(...ADDRESS_FIELDS), text).map(([k, v]) => ({ ...r, origin: { ...r.origin, [k]: v } })),
    fc.tuple(fc.constantFrom(...ADDRESS_KEYS), text).map(([k, v]) => ({ ...r, destination: { ...r.destination, [k]: v } })),
    fc.tuple(fc.nat(r.items.length - 1), fc.constantFrom(...(Object.keys(itemFields) as (keyof RateItem)[])), fc.nat())
      .chain(([at, k]) => itemFields[k].map((v) => ({ ...r, items: r.items.map((x, i) => (i === at ? { ...x, [k]: v } : x)) }))),
    fc.constantFrom('USD', 'EUR', 'JPY').map((currency) => ({ ...r, currency })),
    item.map((extra) => ({ ...r, items: [...r.items, extra] })),
    fc.constant({ ...r, items: r.items.slice(1) }),
  ) as fc.Arbitrary<RateRequest>;

describe('rateRequestInputs', () => {
  it('two requests with the same inputs have the same body, whatever one thing differs', () => {
    fc.assert(fc.property(request.chain((a) => fc.tuple(fc.constant(a), changed(a))), ([a, b]) => {
      if (sameInputs(rateRequestInputs(a), rateRequestInputs(b))) expect(rateRequestBody(b)).toBe(rateRequestBody(a));
    }), { numRuns: 5000 });
  });

  it('a copy has the same inputs; the inputs hold no object a caller could change', () => {
    fc.assert(fc.property(request, (a) => {
      const inputs = rateRequestInputs(a);
      expect(sameInputs(inputs, rateRequestInputs(structuredClone(a)))).toBe(true);
      expect(inputs.every((v) => v === null || typeof v !== 'object')).toBe(true);
    }), { numRuns: 1000 });
    expect(sameInputs([1, 'a'], [1, 'a', null])).toBe(false);
    expect(sameInputs([null], [undefined])).toBe(false);
  });
});
