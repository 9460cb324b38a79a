// COPY's text format (src/db/copy-text.ts), through the real COPY of both drivers (Db.copyFrom):
// every value comes back as it went in, over a fuzz of rows made of the characters that matter to
// the format (backslash, tab, newline, carriage return, the end-of-data marker `\.`, the null
// marker `\N` as text) and ordinary ones, in text, jsonb, timestamptz, integer, double and boolean
// columns, nulls among them; and a batch holding a bad row is written not at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Tx } from '../src/db/db.js';
import { copyLine, copyValue } from '../src/db/copy-text.js';
import { openTestDb } from './helpers/harness.js';

let db: Db;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  await db?.close();
});

const COLUMNS = ['n', 't', 'j', 'at', 'i', 'd', 'b'] as const;
type Row = [number, string | null, unknown, Date | null, number | null, number | null, boolean | null];

/** In a transaction: a temporary table of its own (one connection on PostgreSQL), dropped at its end. */
async function withTable<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.exec('CREATE TEMP TABLE copy_probe (n int PRIMARY KEY, t text, j jsonb, at timestamptz, i bigint, d double precision, b boolean) ON COMMIT DROP');
    return fn(tx);
  });
}

describe('COPY text format', () => {
  it('every value of a fuzz of rows comes back as it went in', async () => {
    const pieces = ['\\', '\t', '\n', '\r', '\\.', '\\N', 'N', '.', '"', "'", ',', 'é', '😀', ' ', 'a', '\u0001', '\u007f', '{', '}'];
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const text = () => Array.from({ length: next() % 9 }, () => pieces[next() % pieces.length]).join('');
    const rows: Row[] = [
      // The end-of-data marker and the null marker, alone as a value: data, not markers.
      [0, '\\.', { '\\.': '\\N' }, new Date(0), 0, 0, false],
      [1, '\\N', null, null, null, null, null],
      [2, '', [], new Date('2026-11-26T10:00:00.123Z'), -9007199254740991, -1.5e-7, true],
    ];
    for (let n = 3; n < 303; n++) {
      const nul = () => next() % 7 === 0;
      rows.push([
        n,
        nul() ? null : text(),
        nul() ? null : { [text()]: text(), list: [text(), next() % 1000, null, true], nested: { deep: text() } },
        nul() ? null : new Date(1_700_000_000_000 + next()),
        nul() ? null : next() - 2 ** 30,
        nul() ? null : (next() - 2 ** 30) / 1024,
        nul() ? null : next() % 2 === 0,
      ]);
    }
    // Sent as one text, or as UTF-8 chunks cut at arbitrary bytes (inside a line, a character's
    // bytes, an escape): COPY reads one stream (the run recorder's form, function-runs.repo.ts).
    const asText = rows.map((r) => copyLine(r)).join('');
    const bytes = Buffer.from(asText);
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; ) {
      const size = 1 + (next() % 700);
      chunks.push(bytes.subarray(at, at + size));
      at += size;
    }
    for (const data of [asText, chunks]) await expectBack(data, rows);
  });

  async function expectBack(data: string | Buffer[], rows: Row[]) {
    const back = await withTable(async (tx) => {
      await tx.copyFrom('copy_probe', COLUMNS, data);
      return (await tx.query<{ n: number; t: string | null; j: unknown; at: Date | null; i: number | null; d: number | null; b: boolean | null }>('SELECT * FROM copy_probe ORDER BY n')).rows;
    });
    expect(back.length).toBe(rows.length);
    back.forEach((got, k) => {
      const [n, t, j, at, i, d, b] = rows[k];
      expect([got.n, got.t, got.j, got.at && new Date(got.at).toISOString(), got.i === null ? null : Number(got.i), got.d, got.b], `row ${n}`)
        .toEqual([n, t, j, at && at.toISOString(), i, d, b]);
    });
  }

  it('a batch with a row the database refuses is written not at all, and says so', async () => {
    await expect(withTable(async (tx) => {
      await tx.copyFrom('copy_probe', COLUMNS, copyLine([1, 'fine', null, null, null, null, null]) + copyLine([2, 'x', '{not json', null, null, null, null]));
    })).rejects.toThrow();
    const count = await withTable(async (tx) => (await tx.query<{ c: number }>('SELECT count(*)::int AS c FROM copy_probe')).rows[0].c);
    expect(count).toBe(0);
  });

  it('values: null as \\N, booleans as t and f, the four special characters escaped, no non-finite number', () => {
    expect(copyLine([null, undefined, true, false, 'a\tb\nc\rd\\e', 5n, { k: 'v' }])).toBe('\\N\t\\N\tt\tf\ta\\tb\\nc\\rd\\\\e\t5\t{"k":"v"}\n');
    expect(() => copyValue(Number.NaN)).toThrow(/non-finite/);
    expect(() => copyValue(Infinity)).toThrow(/non-finite/);
  });
});
