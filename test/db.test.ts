// The database layer: named (prepared) statements return exactly what unnamed ones do, on both
// drivers, whatever the values; on PGlite they travel as quoted literals, so hostile strings are
// the test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openTestDb } from './helpers/harness.js';
import type { Db } from '../src/db/db.js';
import { sqlLiteral } from '../src/db/pglite.js';

let db: Db;
beforeAll(async () => {
  db = await openTestDb();
});
afterAll(() => db?.close());

const SQL = `SELECT $1::text AS t, $2::int AS i, $3::uuid AS u, $4::jsonb AS j, $5::timestamptz AS d, $6::boolean AS b, $7::text AS n`;

describe('named statements', () => {
  it('give the same rows as unnamed statements', async () => {
    const params = ["it's", 42, '01a201d4-eec9-7049-ac63-5d29a00e2d21', JSON.stringify({ a: "q'uote" }), new Date('2026-01-02T03:04:05Z'), true, null];
    const plain = await db.query(SQL, params);
    const named = await db.query(SQL, params, { name: 'test_roundtrip' });
    const again = await db.query(SQL, params, { name: 'test_roundtrip' });
    expect(named.rows).toEqual(plain.rows);
    expect(again.rows).toEqual(plain.rows);
    expect(plain.rows[0]).toMatchObject({ t: "it's", i: 42, j: { a: "q'uote" }, b: true, n: null });
  });

  it('carry any string as data, never as SQL', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary' }).filter((s) => !s.includes('\0')), async (s) => {
        const { rows } = await db.query('SELECT $1::text AS t', [s], { name: 'test_text_echo' });
        expect(rows[0].t).toBe(s);
      }),
      { numRuns: 200 },
    );
    for (const hostile of ["'); DROP TABLE users; --", "\\'; SELECT 1; --", "$$; SELECT 1; $$", "E'\\x27'"]) {
      const { rows } = await db.query('SELECT $1::text AS t', [hostile], { name: 'test_text_echo' });
      expect(rows[0].t).toBe(hostile);
    }
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM users`);
    expect(rows[0].n).toBeGreaterThanOrEqual(0);
  });

  it('sqlLiteral refuses what it cannot write safely', () => {
    expect(() => sqlLiteral(Number.NaN)).toThrow();
    expect(() => sqlLiteral('a\0b')).toThrow();
    expect(sqlLiteral(null)).toBe('NULL');
    expect(sqlLiteral("o'k")).toBe("'o''k'");
  });

  it('work inside transactions', async () => {
    const r = await db.transaction((tx) => tx.query('SELECT $1::int + 1 AS v', [1], { name: 'test_tx_add' }));
    expect(r.rows[0].v).toBe(2);
  });
});
