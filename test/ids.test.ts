// UUID version 7 (RFC 9562) as the service mints them: version and variant bits, the millisecond in
// the first 48 bits, strictly increasing within a process (also within one millisecond and across
// the random pool's refills), and unique.
import { describe, expect, it } from 'vitest';
import { uuidv7, uuidv7After } from '../src/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const msOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('uuidv7', () => {
  it('has version 7, the RFC variant and the given millisecond', () => {
    const at = Date.UTC(2026, 10, 26, 12, 0, 0);
    const id = uuidv7(at + 1000);
    expect(id).toMatch(V7);
    expect(msOf(id)).toBe(at + 1000);
  });

  it('strictly increases and never repeats over many ids in the same millisecond (past several pool refills)', () => {
    const ids: string[] = [];
    const at = Date.now() + 60_000;
    for (let i = 0; i < 3000; i++) ids.push(uuidv7(at));
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(V7);
    // The counter spilled into the next milliseconds rather than wrapping.
    expect(msOf(ids.at(-1)!)).toBeGreaterThanOrEqual(at);
  });

  it('random bits differ between ids', () => {
    const tails = new Set(Array.from({ length: 1000 }, () => uuidv7().slice(19)));
    expect(tails.size).toBe(1000);
  });
});

describe('uuidv7After (an order id under the store lock, C5.3 since_id)', () => {
  it('is greater than the id given, whatever its millisecond and counter, and otherwise the current id', () => {
    // An hour ahead of the real clock: this process's generator never goes back (uuidv7 keeps its last
    // millisecond, which the test above put a minute ahead), so a fixed date once the real clock had
    // passed it made "the current id" a later millisecond than the one given, and the test failed.
    const at = Date.now() + 3_600_000;
    // Ids of another process: the same millisecond with counters up to the last, later milliseconds, and earlier ones.
    for (const delta of [-5, 0, 0, 0, 1, 3]) {
      for (const counter of [0, 1, 0x3ff, 0xffe, 0xfff]) {
        const hex = uuidv7(at + delta).replace(/-/g, '');
        const bumped = hex.slice(0, 12) + '7' + counter.toString(16).padStart(3, '0') + hex.slice(16);
        const other = `${bumped.slice(0, 8)}-${bumped.slice(8, 12)}-${bumped.slice(12, 16)}-${bumped.slice(16, 20)}-${bumped.slice(20)}`;
        const id = uuidv7After(other, at);
        expect(id, `${delta} ${counter}`).toMatch(V7);
        expect(id > other, `${id} > ${other}`).toBe(true);
        expect(msOf(id)).toBeGreaterThanOrEqual(Math.max(at, msOf(other)));
        expect(msOf(id)).toBeLessThanOrEqual(Math.max(at, msOf(other) + 1));
        // Upper case (as a client may send one) compares the same.
        expect(uuidv7After(other.toUpperCase(), at) > other).toBe(true);
      }
    }
    expect(msOf(uuidv7After(null, at + 10))).toBe(at + 10);
  });
});
