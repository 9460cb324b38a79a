// The reader behind the storefront's quote statement (src/db/batch-reader.ts): keys asked for in
// the same turn of the event loop are read together, in chunks of at most its batch size, each
// caller getting its own key's answer; keys asked for in different turns are read apart; a failed
// read (rejected or thrown) fails every caller it carried, and only those.
import { describe, expect, it } from 'vitest';
import { BatchReader } from '../src/db/batch-reader.js';

function harness(maxBatch: number, fail?: (keys: number[]) => 'reject' | 'throw' | null) {
  const reads: number[][] = [];
  const reader = new BatchReader<number, string>({
    maxBatch,
    read: (keys) => {
      reads.push(keys);
      const failure = fail?.(keys);
      if (failure === 'throw') throw new Error(`cannot read ${keys.join(',')}`);
      if (failure === 'reject') return Promise.reject(new Error(`lost ${keys.join(',')}`));
      // Odd keys are not found.
      return new Promise((resolve) => setTimeout(() => resolve(keys.map((k) => (k % 2 ? null : `value ${k}`))), 2));
    },
  });
  return { reader, reads };
}

describe('BatchReader', () => {
  it('reads the keys of one turn together, in chunks of its batch size, each caller its own answer', async () => {
    const { reader, reads } = harness(4);
    const keys = Array.from({ length: 10 }, (_, i) => i);
    const answers = await Promise.all(keys.map((k) => reader.load(k)));
    expect(reads).toEqual([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]);
    expect(answers).toEqual(keys.map((k) => (k % 2 ? null : `value ${k}`)));
  });

  it('a lone key is read alone; keys of different turns are read apart', async () => {
    const { reader, reads } = harness(8);
    expect(await reader.load(2)).toBe('value 2');
    const first = reader.load(4);
    await new Promise((r) => setImmediate(r));
    const second = reader.load(6);
    expect(await Promise.all([first, second])).toEqual(['value 4', 'value 6']);
    expect(reads).toEqual([[2], [4], [6]]);
  });

  it('a failed read, rejected or thrown, fails the callers of its chunk and no others', async () => {
    for (const how of ['reject', 'throw'] as const) {
      const { reader } = harness(2, (keys) => (keys.includes(3) ? how : null));
      const settled = await Promise.allSettled([0, 2, 3, 4, 6].map((k) => reader.load(k)));
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
      expect((settled[2] as PromiseRejectedResult).reason.message).toMatch(/3,4/);
    }
  });
});
