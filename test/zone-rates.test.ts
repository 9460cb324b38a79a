// Merchant zone rates (C15.2) as a pure function: countries, Simple/Weight/Price conditions with
// inclusive and open bounds, weights in g, kg, lb and oz decided exactly, and the rate's shape.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { zoneRates, type StoredZone, type ZoneLine } from '../src/checkout/zone-rates.js';
import { gramsPerUnit, kgOf, parseDecimal } from '../src/checkout/weights.js';

let n = 0;
function zone(over: Partial<StoredZone> = {}): StoredZone {
  n++;
  return {
    id: `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`, name: `Zone ${n}`, countries: ['US'], description: '',
    price_minor: 500, type: 'Simple', min_weight: null, max_weight: null, min_price: null, max_price: null, ...over,
  };
}
const line = (weight: string | number | null, weightUnit: string | null, quantity = 1, requiresShipping = true): ZoneLine => ({ weight, weightUnit, quantity, requiresShipping });
const quote = (zones: StoredZone[], lines: ZoneLine[], subtotalMinor = 1000, country: string | null = 'US') => zoneRates({ zones, lines, subtotalMinor, country });
const holds = (z: StoredZone, lines: ZoneLine[], subtotalMinor = 1000) => quote([z], lines, subtotalMinor).length === 1;

describe('C15.2 zone rates', () => {
  it('a zone gives its rate: handle zone-{id}, title and code its name, its price, source null', () => {
    const z = zone({ name: 'Standard', price_minor: 1250, description: 'Three to five days' });
    expect(quote([z], [line(1, 'kg')])).toEqual([{
      handle: `zone-${z.id}`, title: 'Standard', code: 'Standard', price: '12.50', source: null,
      description: 'Three to five days', min_delivery_date: null, max_delivery_date: null,
    }]);
    expect(quote([zone({ price_minor: 0 })], [line(1, 'kg')])[0]).toMatchObject({ price: '0.00', description: null });
  });

  it('only zones that hold the destination country; none without a destination or without lines that need shipping', () => {
    const us = zone({ countries: ['US', 'CA'] });
    const fr = zone({ countries: ['FR'] });
    const empty = zone({ countries: [] });
    expect(quote([us, fr, empty], [line(1, 'kg')], 1000, 'CA').map((r) => r.handle)).toEqual([`zone-${us.id}`]);
    expect(quote([us, fr, empty], [line(1, 'kg')], 1000, 'fr').map((r) => r.handle)).toEqual([`zone-${fr.id}`]);
    expect(quote([us, fr], [line(1, 'kg')], 1000, 'DE')).toEqual([]);
    expect(quote([us, fr], [line(1, 'kg')], 1000, null)).toEqual([]);
    expect(quote([us, fr], [line(1, 'kg')], 1000, 'XX')).toEqual([]);
    expect(quote([us], [line(1, 'kg', 1, false)])).toEqual([]);
    expect(quote([us], [])).toEqual([]);
  });

  it('cheapest first, then by title', () => {
    const a = zone({ name: 'B', price_minor: 700 });
    const b = zone({ name: 'A', price_minor: 700 });
    const c = zone({ name: 'C', price_minor: 100 });
    expect(quote([a, b, c], [line(1, 'kg')]).map((r) => r.title)).toEqual(['C', 'A', 'B']);
  });

  it('Weight: the lines that require shipping, times quantity, in kg; bounds included; null bounds open', () => {
    const z = (min: string | null, max: string | null) => zone({ type: 'Weight', min_weight: min, max_weight: max });
    expect(holds(z('2', '2'), [line('500', 'g', 2), line('1', 'kg'), line('100', 'kg', 3, false)])).toBe(true);
    expect(holds(z('2.0001', null), [line('500', 'g', 2), line('1', 'kg')])).toBe(false);
    expect(holds(z(null, '1.9999'), [line('500', 'g', 2), line('1', 'kg')])).toBe(false);
    expect(holds(z(null, null), [line(null, null)])).toBe(true);
    // No weight weighs nothing: inside [0, x], outside [0.0001, x].
    expect(holds(z('0', '1'), [line(null, 'kg')])).toBe(true);
    expect(holds(z('0.0001', '1'), [line(null, 'kg')])).toBe(false);
    // A weight without a unit is in kg.
    expect(holds(z('3', '3'), [line(3, null)])).toBe(true);
  });

  it('Weight: decided exactly where binary floating point would not be', () => {
    // 0.1 + 0.2 is 0.30000000000000004 in floating point, above a 0.3 bound.
    expect(holds(zone({ type: 'Weight', max_weight: '0.3' }), [line(0.1, 'kg'), line(0.2, 'kg')])).toBe(true);
    expect(holds(zone({ type: 'Weight', min_weight: '0.3' }), [line('100', 'g', 3)])).toBe(true);
    // 1 lb is 0.45359237 kg: above 0.4535, below 0.4536; 16 oz is exactly 1 lb.
    for (const lines of [[line(1, 'lb')], [line(16, 'oz')], [line(1, 'oz', 16)]]) {
      expect(holds(zone({ type: 'Weight', min_weight: '0.4535' }), lines)).toBe(true);
      expect(holds(zone({ type: 'Weight', max_weight: '0.4536' }), lines)).toBe(true);
      expect(holds(zone({ type: 'Weight', min_weight: '0.4536' }), lines)).toBe(false);
      expect(holds(zone({ type: 'Weight', max_weight: '0.4535' }), lines)).toBe(false);
    }
    // 1000 lb is 453.59237 kg, and 2.2046 lb falls just short of 1 kg.
    expect(holds(zone({ type: 'Weight', min_weight: '453.5923', max_weight: '453.5924' }), [line(1000, 'lb')])).toBe(true);
    expect(holds(zone({ type: 'Weight', min_weight: '1' }), [line('2.2046', 'lb')])).toBe(false);
    expect(holds(zone({ type: 'Weight', min_weight: '1' }), [line('2.2047', 'lb')])).toBe(true);
  });

  it('Price: the subtotal, bounds included, null bounds open', () => {
    const z = (min: string | null, max: string | null) => zone({ type: 'Price', min_price: min, max_price: max });
    expect(holds(z('10', '20'), [line(1, 'kg')], 1000)).toBe(true);
    expect(holds(z('10', '20'), [line(1, 'kg')], 2000)).toBe(true);
    expect(holds(z('10', '20'), [line(1, 'kg')], 999)).toBe(false);
    expect(holds(z('10', '20'), [line(1, 'kg')], 2001)).toBe(false);
    expect(holds(z('10.01', null), [line(1, 'kg')], 1001)).toBe(true);
    expect(holds(z(null, '0'), [line(1, 'kg')], 0)).toBe(true);
    expect(holds(z(null, null), [line(1, 'kg')], 123456)).toBe(true);
    // Stored numerics may come back as numbers.
    expect(holds(zone({ type: 'Price', min_price: 10.5, max_price: 10.5 }), [line(1, 'kg')], 1050)).toBe(true);
  });

  it('property: a Weight zone holds exactly when min <= total <= max, for every unit, on a model in integers', () => {
    // The model: weights in picograms-per-kg units (10^-12 kg), where every factor is an integer.
    const PER_UNIT = { g: 10n ** 9n, kg: 10n ** 12n, lb: 453_592_370_000n, oz: 28_349_523_125n } as const;
    const bound = fc.option(fc.integer({ min: 0, max: 2_000_000 }), { nil: null }); // in 10^-4 kg
    const lines = fc.array(fc.record({
      amount: fc.integer({ min: 0, max: 5000 }), unit: fc.constantFrom('g', 'kg', 'lb', 'oz' as const),
      quantity: fc.integer({ min: 1, max: 20 }), requiresShipping: fc.boolean(),
    }), { maxLength: 6 });
    fc.assert(fc.property(lines, bound, bound, (ls, min, max) => {
      const total = ls.filter((l) => l.requiresShipping).reduce((s, l) => s + BigInt(l.amount) * BigInt(l.quantity) * PER_UNIT[l.unit], 0n);
      const toModel = (b: number) => BigInt(b) * 10n ** 8n;
      const expected = ls.some((l) => l.requiresShipping) && (min === null || total >= toModel(min)) && (max === null || total <= toModel(max));
      const asText = (b: number | null) => (b === null ? null : (b / 10_000).toFixed(4));
      const z = zone({ type: 'Weight', min_weight: asText(min), max_weight: asText(max) });
      return holds(z, ls.map((l) => line(String(l.amount), l.unit, l.quantity, l.requiresShipping))) === expected;
    }), { numRuns: 2000 });
  });

  it('property: bounds are inclusive at every edge, for weights and prices', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 1 }), (grams, unitIsKg) => {
      const w = unitIsKg ? line((grams / 1000).toString(), 'kg') : line(String(grams), 'g');
      const kg = (g: number) => (g / 1000).toFixed(3);
      return holds(zone({ type: 'Weight', min_weight: kg(grams), max_weight: kg(grams) }), [w])
        && !holds(zone({ type: 'Weight', min_weight: kg(grams + 1) }), [w])
        && (grams === 0 || !holds(zone({ type: 'Weight', max_weight: kg(grams - 1) }), [w]));
    }), { numRuns: 2000 });
    fc.assert(fc.property(fc.integer({ min: 0, max: 1_000_000_000 }), (minor) => {
      const price = (m: number) => `${Math.floor(m / 100)}.${String(m % 100).padStart(2, '0')}`;
      return holds(zone({ type: 'Price', min_price: price(minor), max_price: price(minor) }), [line(1, 'kg')], minor)
        && !holds(zone({ type: 'Price', min_price: price(minor + 1) }), [line(1, 'kg')], minor)
        && (minor === 0 || !holds(zone({ type: 'Price', max_price: price(minor - 1) }), [line(1, 'kg')], minor));
    }), { numRuns: 2000 });
  });
});

describe('weights', () => {
  it('reads plain and exponent decimals, refuses the rest', () => {
    expect(parseDecimal('1.250')).toEqual({ units: 1250n, scale: 3 });
    expect(parseDecimal(1e-7)).toEqual({ units: 1n, scale: 7 });
    expect(parseDecimal(2e21)).toEqual({ units: 2_000_000_000_000_000_000_000n, scale: 0 });
    expect(parseDecimal('.5')).toEqual({ units: 5n, scale: 1 });
    for (const bad of ['', 'abc', '1.2.3', '.', NaN, Infinity, null]) expect(parseDecimal(bad as never)).toBeNull();
    expect(kgOf('-1', 'kg')).toEqual({ units: 0n, scale: 0 });
  });

  it('grams per unit are whole, rounded half up (C15.3 items[].grams)', () => {
    expect(gramsPerUnit(1, 'lb')).toBe(454); // 453.59237
    expect(gramsPerUnit(1, 'oz')).toBe(28); // 28.349523125
    expect(gramsPerUnit('0.5', 'g')).toBe(1);
    expect(gramsPerUnit('0.4999', 'g')).toBe(0);
    expect(gramsPerUnit('2.5', 'kg')).toBe(2500);
    expect(gramsPerUnit(0.0015, 'kg')).toBe(2);
    expect(gramsPerUnit(1e-7, 'kg')).toBe(0);
    expect(gramsPerUnit(null, 'kg')).toBe(0);
    expect(gramsPerUnit(3, null)).toBe(3000);
  });
});
