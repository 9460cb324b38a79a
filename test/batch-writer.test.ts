// The writer behind run records (C11.5) and shipping rate answers (C15.3): rows handed over are
// written together after at most its delay, at once past its batch size, in order, each write
// after the one before; rows under one key replace one another; a failed write is logged, never
// thrown, and the writer goes on; close() writes what is left.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BatchWriter } from '../src/db/batch-writer.js';
import { createLogger } from '../src/platform/logger.js';

function harness(options: { keyOf?: (row: string) => string; maxDelayMs?: number; maxBatch?: number; fail?: (rows: string[]) => boolean } = {}) {
  const writes: string[][] = [];
  const logged: Record<string, unknown>[] = [];
  const log = createLogger({
    level: 'info',
    destination: new Writable({ write: (chunk, _enc, done) => (logged.push(JSON.parse(String(chunk))), done()) }),
  });
  const writer = new BatchWriter<string>({
    write: async (rows) => {
      await new Promise((r) => setTimeout(r, 5));
      if (options.fail?.(rows)) throw new Error('the database is away');
      writes.push(rows);
    },
    log,
    failure: 'rows could not be written',
    keyOf: options.keyOf,
    maxDelayMs: options.maxDelayMs ?? 60_000,
    maxBatch: options.maxBatch,
  });
  return { writer, writes, logged };
}

describe('BatchWriter', () => {
  it('writes what gathered in one batch, in order, after its delay', async () => {
    const { writer, writes } = harness({ maxDelayMs: 20 });
    writer.add(['a', 'b']);
    writer.add([]);
    writer.add(['c']);
    expect(writes).toEqual([]);
    expect(writer.pending).toBe(3);
    await new Promise((r) => setTimeout(r, 80));
    expect(writes).toEqual([['a', 'b', 'c']]);
    expect(writer.pending).toBe(0);
  });

  it('writes at once past its batch size, in batches of at most that size, one after another', async () => {
    const { writer, writes } = harness({ maxBatch: 3 });
    writer.add(['1', '2']);
    expect(writer.pending).toBe(2);
    writer.add(['3', '4', '5', '6', '7']); // past 3: handed to a write now, cut into batches of 3
    expect(writer.pending).toBe(0);
    writer.add(['8']);
    await writer.flush();
    expect(writes).toEqual([['1', '2', '3'], ['4', '5', '6'], ['7'], ['8']]);
  });

  it('keeps the last row of each key, where that key was last given', async () => {
    const { writer, writes } = harness({ keyOf: (row) => row.split('=')[0] });
    writer.add(['x=1', 'y=1']);
    writer.add(['x=2']);
    await writer.close();
    expect(writes).toEqual([['y=1', 'x=2']]);
  });

  it('logs a failed write, resolves, and writes the next batch', async () => {
    const { writer, writes, logged } = harness({ fail: (rows) => rows.includes('bad') });
    writer.add(['bad', 'worse']);
    await expect(writer.flush()).resolves.toBeUndefined();
    writer.add(['good']);
    await writer.close();
    expect(writes).toEqual([['good']]);
    expect(logged).toEqual([expect.objectContaining({ msg: 'rows could not be written', rows: 2, level: 50 })]);
  });
});
