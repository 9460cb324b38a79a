// sameJson and copyJson (src/json-equal.ts): equality of JSON values by content, keys in any order. It decides
// whether a checkout's last quote of the shipping apps can be reused (rate-memo.ts), so a false
// "same" would give a buyer rates for another request: checked against node:util's
// isDeepStrictEqual over values drawn from a small domain (so that equal and nearly equal pairs
// are common), and over JSON with its keys reordered.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyJson, sameJson } from '../src/json-equal.js';

/** JSON from few keys and leaves: two draws are often equal, or differ in one place. */
const smallJson = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, 0, 1, '', 'a', '1', true, false),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('value'), { maxKeys: 3, noNullPrototype: true }),
  ),
})).value;

/** The same value with every object's keys in reverse order. */
function reversedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversedKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversedKeys(x)]));
  return v;
}

/** JSON as JSON.parse gives it (no -0, which JSON writes as 0). */
const asParsed = (v: unknown) => JSON.parse(JSON.stringify(v));

describe('sameJson', () => {
  it('agrees with isDeepStrictEqual on JSON values', () => {
    fc.assert(fc.property(smallJson, smallJson, (a, b) => {
      expect(sameJson(a, b)).toBe(isDeepStrictEqual(a, b));
    }), { numRuns: 5000 });
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
      const [x, y] = [asParsed(a), asParsed(b)];
      expect(sameJson(x, y)).toBe(isDeepStrictEqual(x, y));
    }), { numRuns: 1000 });
  });

  it('is true for a copy with keys in another order, false for a change anywhere', () => {
    fc.assert(fc.property(fc.jsonValue(), (a) => {
      const x = asParsed(a);
      expect(sameJson(x, reversedKeys(x))).toBe(true);
      expect(sameJson({ v: x }, { v: x, extra: null })).toBe(false);
      expect(sameJson([x], [x, x])).toBe(false);
    }), { numRuns: 1000 });
    expect(sameJson({ a: undefined }, {})).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson({}, [])).toBe(false);
    expect(sameJson({ a: 1 }, { a: '1' })).toBe(false);
  });

  it('copyJson: equal by content, sharing no object or array with the original', () => {
    /** Every object and array inside a value (itself included). */
    const containers = (v: unknown, into = new Set<unknown>()): Set<unknown> => {
      if (v && typeof v === 'object') {
        into.add(v);
        for (const x of Object.values(v)) containers(x, into);
      }
      return into;
    };
    fc.assert(fc.property(fc.jsonValue(), (a) => {
      const x = asParsed(a);
      const copy = copyJson(x);
      expect(isDeepStrictEqual(copy, x)).toBe(true);
      const mine = containers(x);
      for (const c of containers(copy)) expect(mine.has(c)).toBe(false);
    }), { numRuns: 1000 });
  });
});
