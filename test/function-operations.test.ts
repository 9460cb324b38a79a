// What functions' outputs do to a checkout (C11.3), pure: hide, rename and move; validation
// errors; order and product discounts with the caps of the clause, after the discount code.
import { describe, expect, it } from 'vitest';
import { applyTransforms, collectValidationErrors, computeAutomaticDiscounts, type DiscountLine } from '../src/functions/operations.js';
import { computeTotals } from '../src/orders/pricing.js';

const rates = [
  { handle: 'std', title: 'Standard' },
  { handle: 'exp', title: 'Express' },
  { handle: 'pick', title: 'Pickup' },
];
const ops = (...operations: object[]) => ({ operations: operations as any });

describe('C11.3 hide, rename, move', () => {
  it('apply in activation order, each over what the previous left; unknown handles are ignored', () => {
    const out = applyTransforms(rates, [
      ops({ rename: { handle: 'std', title: 'Cheap' } }, { hide: { handle: 'nope' } }),
      ops({ move: { handle: 'pick', index: 0 } }, { hide: { handle: 'exp' } }, { rename: { handle: 'exp', title: 'gone' } }),
    ]);
    expect(out).toEqual([{ handle: 'pick', title: 'Pickup' }, { handle: 'std', title: 'Cheap' }]);
    expect(rates[0].title).toBe('Standard'); // the input is not changed
  });

  it('a move past the end goes to the end', () => {
    expect(applyTransforms(rates, [ops({ move: { handle: 'std', index: 99 } })]).map((r) => r.handle)).toEqual(['exp', 'pick', 'std']);
  });
});

describe('C11.3 validations', () => {
  it('keeps errors aimed at the cart or at a line of the checkout', () => {
    const errors = collectValidationErrors([
      ops({ validationAdd: { errors: [{ message: 'Too many', target: 'cart' }, { message: 'Not this one', target: 'line-1' }] } }),
      ops({ validationAdd: { errors: [{ message: 'Unknown line', target: 'line-9' }] } }),
    ], ['line-1', 'line-2']);
    expect(errors).toEqual([{ message: 'Too many', target: 'cart' }, { message: 'Not this one', target: 'line-1' }]);
  });
});

describe('C11.3 discounts', () => {
  const lines: DiscountLine[] = [
    { id: 'a', lineMinor: 6000, codeDiscountMinor: 0 },
    { id: 'b', lineMinor: 4000, codeDiscountMinor: 0 },
  ];

  it('a percentage of the subtotal, shared over the lines; product discounts per named line', () => {
    const [order, product] = computeAutomaticDiscounts(lines, [
      ops({ orderDiscountAdd: { message: '10% off', value: { percentage: 10 } } }),
      ops({ productDiscountAdd: { message: '5 off b', lineIds: ['b', 'zzz'], value: { fixedAmount: '5.00' } } }),
    ]);
    expect(order).toEqual({ title: '10% off', valueType: 'percentage', value: '10.00', lineAmountsMinor: [600, 400], amountMinor: 1000 });
    expect(product).toEqual({ title: '5 off b', valueType: 'fixed_amount', value: '5.00', lineAmountsMinor: [0, 500], amountMinor: 500 });
  });

  it('percentages are of the subtotal, not of what other discounts left; caps apply in order, after the code', () => {
    const withCode: DiscountLine[] = [{ id: 'a', lineMinor: 10000, codeDiscountMinor: 5000 }];
    const found = computeAutomaticDiscounts(withCode, [
      ops({ orderDiscountAdd: { message: 'forty', value: { percentage: 40 } } }),
      ops({ orderDiscountAdd: { message: 'forty again', value: { percentage: 40 } } }),
      ops({ productDiscountAdd: { message: 'late', lineIds: ['a'], value: { fixedAmount: '1' } } }),
    ]);
    // 40 % of 100.00 is 40.00 (not 40 % of the 50.00 the code left); the second can take only the 10.00 left.
    expect(found.map((d) => d.amountMinor)).toEqual([4000, 1000, 0]);
    const totals = computeTotals([{ productId: null, unitMinor: 10000, quantity: 1, taxable: true }], 0, { code: 'HALF', type: 'Percentage', percentBp: 5000, amountMinor: null, applyOn: [] }, null, 1,
      [found.reduce((s, d) => s + d.lineAmountsMinor[0], 0)]);
    expect(totals.subtotalMinor).toBe(0);
    expect(totals.totalDiscountMinor).toBe(10000);
  });

  it('a fixed order discount larger than the order takes the whole order and no more', () => {
    const [d] = computeAutomaticDiscounts(lines, [ops({ orderDiscountAdd: { message: 'big', value: { fixedAmount: '500' } } })]);
    expect(d.amountMinor).toBe(10000);
    expect(d.lineAmountsMinor).toEqual([6000, 4000]);
  });

  it('whole yen: amounts are whole steps of the currency', () => {
    const yen: DiscountLine[] = [{ id: 'a', lineMinor: 100000, codeDiscountMinor: 0 }, { id: 'b', lineMinor: 33300, codeDiscountMinor: 0 }];
    const [d] = computeAutomaticDiscounts(yen, [ops({ orderDiscountAdd: { message: 'x', value: { percentage: 3.3 } } })], 100);
    expect(d.lineAmountsMinor.every((a) => a % 100 === 0)).toBe(true);
    expect(d.amountMinor).toBe(4400); // 3.3 % of 1,333 yen is 43.989 -> 44 yen
  });

  it('a product discount naming no line of the checkout is ignored', () => {
    expect(computeAutomaticDiscounts(lines, [ops({ productDiscountAdd: { message: 'x', lineIds: ['nope'], value: { percentage: 50 } } })])).toEqual([]);
  });
});
