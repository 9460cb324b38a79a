// Paging rules (app-api.md Pagination and Limits: default 50, maximum 250, clamped silently; C5.4:
// the Link header of bare-body lists) and money at the edge (Conventions 3; C5.2: two-decimal
// strings, no binary floating point), as unit and property tests.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DEFAULT_LIMIT, MAX_LIMIT, linkHeader, parsePage, type Page } from '../src/http/paging.js';
import { AmountTooLargeError, formatMinor, parseMoney } from '../src/money.js';

/** What an HTTP query value can be once parsed: strings mostly; numbers and arrays from coercion. */
const queryValue = fc.oneof(
  fc.string(),
  fc.stringMatching(/^-?\d{1,25}(\.\d{1,3})?$/),
  fc.integer(),
  fc.double(),
  fc.constantFrom(undefined, null, '', ' ', 'Infinity', '-Infinity', 'NaN', '1e400', '1e300', '0x10', '0', '-1', 'abc'),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.boolean(),
);

describe('parsePage (Pagination: page default 1, limit default 50, maximum 250)', () => {
  it('defaults when nothing is given', () => {
    expect(parsePage({})).toEqual({ page: 1, limit: DEFAULT_LIMIT, offset: 0 });
    expect(DEFAULT_LIMIT).toBe(50);
    expect(MAX_LIMIT).toBe(250);
  });

  it('reads page and limit; offset skips the earlier pages', () => {
    expect(parsePage({ page: '3', limit: '20' })).toEqual({ page: 3, limit: 20, offset: 40 });
    expect(parsePage({ page: 2 })).toEqual({ page: 2, limit: 50, offset: 50 });
    expect(parsePage({ limit: '250' })).toEqual({ page: 1, limit: 250, offset: 0 });
  });

  it('clamps a large limit silently to 250', () => {
    expect(parsePage({ limit: '251' }).limit).toBe(250);
    expect(parsePage({ limit: '1000' }).limit).toBe(250);
    expect(parsePage({ limit: '1e400' }).limit).toBe(250);
  });

  it('falls back to the defaults for missing or invalid values', () => {
    for (const bad of ['', '0', '-1', '-0.5', '0.5', 'abc', 'NaN', null, undefined, '-Infinity']) {
      expect(parsePage({ page: bad, limit: bad })).toEqual({ page: 1, limit: 50, offset: 0 });
    }
  });

  it('floors fractions', () => {
    expect(parsePage({ page: '2.9', limit: '10.7' })).toEqual({ page: 2, limit: 10, offset: 10 });
  });

  it('honours per-list defaults (e.g. GDPR requests default 20)', () => {
    expect(parsePage({}, { limit: 20 })).toEqual({ page: 1, limit: 20, offset: 0 });
    expect(parsePage({ limit: '500' }, { limit: 20, max: 100 }).limit).toBe(100);
    expect(parsePage({ limit: '30' }, { limit: 20 }).limit).toBe(30);
  });

  it('a huge page stays a whole number whose offset is a safe integer (SQL never sees 5e+21)', () => {
    for (const page of ['99999999999999999999', '1e300', 'Infinity', String(Number.MAX_SAFE_INTEGER)]) {
      const p = parsePage({ page, limit: '250' });
      expect(Number.isSafeInteger(p.page)).toBe(true);
      expect(Number.isSafeInteger(p.offset)).toBe(true);
      expect(p.page).toBeGreaterThan(1);
    }
  });

  it('property: for any query, page >= 1, 1 <= limit <= 250, offset = (page - 1) * limit, all safe integers', () => {
    fc.assert(
      fc.property(queryValue, queryValue, (page, limit) => {
        const p = parsePage({ page, limit });
        expect(Number.isSafeInteger(p.page)).toBe(true);
        expect(Number.isSafeInteger(p.limit)).toBe(true);
        expect(Number.isSafeInteger(p.offset)).toBe(true);
        expect(p.page).toBeGreaterThanOrEqual(1);
        expect(p.limit).toBeGreaterThanOrEqual(1);
        expect(p.limit).toBeLessThanOrEqual(MAX_LIMIT);
        expect(p.offset).toBe((p.page - 1) * p.limit);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: whole numbers are taken as given, limits above 250 become 250', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 100_000 }), fc.boolean(), (page, limit, asString) => {
        const p = parsePage(asString ? { page: String(page), limit: String(limit) } : { page, limit });
        expect(p).toEqual({ page, limit: Math.min(limit, 250), offset: (page - 1) * Math.min(limit, 250) });
      }),
    );
  });

  it('property: values below 1 or not numbers give the defaults', () => {
    const invalid = fc.oneof(fc.integer({ max: 0 }), fc.double({ max: 0.999, noNaN: true }), fc.constant(Number.NaN), fc.stringMatching(/^[a-z]+$/));
    fc.assert(
      fc.property(invalid, invalid, (page, limit) => {
        expect(parsePage({ page, limit })).toEqual({ page: 1, limit: 50, offset: 0 });
        expect(parsePage({ page: String(page), limit: String(limit) })).toEqual({ page: 1, limit: 50, offset: 0 });
      }),
    );
  });
});

describe('linkHeader (C5.4: rel="next" while more results exist, rel="previous" when page > 1)', () => {
  const BASE = 'http://svc.test';
  const PATH = '/api/v1/products.json';
  const page = (n: number, limit: number): Page => ({ page: n, limit, offset: (n - 1) * limit });

  /** The header's links by rel, in order. */
  function parseLinks(header: string): { url: string; rel: string }[] {
    const links = [...header.matchAll(/<([^>]*)>; rel="([a-z]+)"/g)].map((m) => ({ url: m[1], rel: m[2] }));
    expect(links.map((l) => `<${l.url}>; rel="${l.rel}"`).join(', ')).toBe(header); // nothing else in it
    return links;
  }

  it('first page with more: next only', () => {
    expect(linkHeader(BASE, PATH, {}, page(1, 3), true)).toBe(`<${BASE}${PATH}?page=2&limit=3>; rel="next"`);
  });

  it('middle page: next, then previous', () => {
    expect(linkHeader(BASE, PATH, {}, page(2, 3), true)).toBe(
      `<${BASE}${PATH}?page=3&limit=3>; rel="next", <${BASE}${PATH}?page=1&limit=3>; rel="previous"`,
    );
  });

  it('last page: previous only', () => {
    expect(linkHeader(BASE, PATH, {}, page(3, 3), false)).toBe(`<${BASE}${PATH}?page=2&limit=3>; rel="previous"`);
  });

  it('a single page: no header', () => {
    expect(linkHeader(BASE, PATH, {}, page(1, 50), false)).toBeNull();
  });

  it('filters are carried along; empty ones and page/limit from the query are not', () => {
    expect(linkHeader(BASE, PATH, { status: 'active', since_id: undefined, code: '', x: null, page: '9', limit: '99' }, page(2, 3), true)).toBe(
      `<${BASE}${PATH}?page=3&limit=3&status=active>; rel="next", <${BASE}${PATH}?page=1&limit=3&status=active>; rel="previous"`,
    );
  });

  it('filter values are URL-encoded', () => {
    const header = linkHeader(BASE, PATH, { code: 'A&B=C, <d>' }, page(1, 3), true)!;
    const [next] = parseLinks(header);
    expect(new URL(next.url).searchParams.get('code')).toBe('A&B=C, <d>');
  });

  const filterKey = fc.string({ minLength: 1, maxLength: 12 }).filter((k) => k !== 'page' && k !== 'limit');
  const filterValue = fc.oneof(fc.string(), fc.integer(), fc.constant(undefined), fc.constant(null), fc.constant(''));

  it('property: next iff hasNext, previous iff page > 1, with the right page, limit and every filter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 250 }),
        fc.boolean(),
        fc.dictionary(filterKey, filterValue, { maxKeys: 4 }),
        fc.option(fc.record({ page: fc.string(), limit: fc.string() }), { nil: undefined }),
        (n, limit, hasNext, filters, pagingInQuery) => {
          const query: Record<string, unknown> = { ...filters, ...(pagingInQuery ?? {}) };
          const header = linkHeader(BASE, PATH, query, page(n, limit), hasNext);
          if (!hasNext && n === 1) {
            expect(header).toBeNull();
            return;
          }
          const links = parseLinks(header!);
          const expectedRels = [...(hasNext ? ['next'] : []), ...(n > 1 ? ['previous'] : [])];
          expect(links.map((l) => l.rel)).toEqual(expectedRels);
          const carried = Object.entries(filters).filter(([, v]) => v !== undefined && v !== null && v !== '');
          for (const link of links) {
            expect(link.url.startsWith(`${BASE}${PATH}?page=`)).toBe(true);
            const url = new URL(link.url);
            expect(url.origin + url.pathname).toBe(BASE + PATH);
            expect(url.searchParams.get('page')).toBe(String(link.rel === 'next' ? n + 1 : n - 1));
            expect(url.searchParams.get('limit')).toBe(String(limit));
            expect(url.searchParams.getAll('page')).toHaveLength(1);
            expect(url.searchParams.getAll('limit')).toHaveLength(1);
            for (const [key, value] of carried) expect(url.searchParams.get(key)).toBe(String(value));
            expect([...url.searchParams.keys()].length).toBe(2 + carried.length);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('money (Conventions 3; C5.2: two-decimal strings, integer minor units inside)', () => {
  it('formats minor units as two-decimal strings', () => {
    expect(formatMinor(1990)).toBe('19.90');
    expect(formatMinor(5)).toBe('0.05');
    expect(formatMinor(0)).toBe('0.00');
    expect(formatMinor(100)).toBe('1.00');
    expect(formatMinor(-5)).toBe('-0.05');
    expect(formatMinor(-12345)).toBe('-123.45');
    expect(formatMinor(null)).toBeNull();
    expect(formatMinor(undefined)).toBeNull();
  });

  it('parses decimal strings and numbers without float error', () => {
    expect(parseMoney('19.9')).toBe(1990);
    expect(parseMoney('19.90')).toBe(1990);
    expect(parseMoney(19.9)).toBe(1990);
    expect(parseMoney('0.1')).toBe(10);
    expect(parseMoney(0.1 + 0.2)).toBe(30);
    expect(parseMoney('19')).toBe(1900);
    expect(parseMoney(' 7.05 ')).toBe(705);
    expect(parseMoney('-3.5')).toBe(-350);
    expect(parseMoney(null)).toBeNull();
    expect(parseMoney(undefined)).toBeNull();
    expect(parseMoney('')).toBeNull();
  });

  it('rejects what is not an amount', () => {
    for (const bad of ['abc', '1.234', '1e5', '1,50', '.5', '5.', '--1', '+1', 'NaN', 'Infinity', Number.NaN, Number.POSITIVE_INFINITY, 1e21, {}, true]) {
      expect(() => parseMoney(bad)).toThrow(RangeError);
    }
  });

  it('property: formatMinor gives a two-decimal string and parseMoney reads it back exactly', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (minor) => {
        const text = formatMinor(minor)!;
        expect(text).toMatch(/^-?\d+\.\d{2}$/);
        expect(parseMoney(text)).toBe(minor);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: a number with at most two decimals parses to its minor units', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (minor) => {
        expect(parseMoney(minor / 100)).toBe(minor + 0); // + 0: never -0
        expect(formatMinor(parseMoney(minor / 100))).toBe(formatMinor(minor));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: a number or a string with a third decimal is refused at every magnitude, never rounded; past 2^53 - 1 hundredths too (C5.2)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e11, max: 1e11 }), fc.integer({ min: 1, max: 9 }), (minor, third) => {
        const thousandths = minor * 10 + Math.sign(minor || 1) * third;
        expect(() => parseMoney(thousandths / 1000)).toThrow(RangeError);
        expect(() => parseMoney((thousandths / 1000).toFixed(3))).toThrow(RangeError);
      }),
      { numRuns: 2000 },
    );
    for (const huge of [90071992547409.92, '90071992547409.92', 1e20, '100000000000000000000.00', -90071992547409.92]) {
      expect(() => parseMoney(huge)).toThrow(AmountTooLargeError);
    }
    expect(parseMoney('90071992547409.91')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('property: parsing then formatting normalises to two decimals', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^-?\d{1,12}(\.\d{1,2})?$/), (text) => {
        const minor = parseMoney(text)!;
        const [whole, frac = ''] = text.replace('-', '').split('.');
        const expected = `${text.startsWith('-') && minor !== 0 ? '-' : ''}${BigInt(whole)}.${frac.padEnd(2, '0')}`;
        expect(formatMinor(minor)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
