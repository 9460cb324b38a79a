// The database layer: named (prepared) statements return exactly what unnamed ones do, on both
// drivers, whatever the values; on PGlite they travel as quoted literals, so hostile strings are
// the test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openTestDb } from './helpers/harness.js';
import type { Db } from '../src/db/db.js';
import { sqlLiteral } from '../src/db/pglite.js';
import { insertRow, insertSql, updateRow, updateSql } from '../src/db/sql.js';
import { dbErrorKind, isCheckViolation, isDataException, isForeignKeyViolation, isNotNullViolation, isUniqueViolation } from '../src/db/errors.js';

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

  it('may be used for the first time by several queries at once', async () => {
    const rows = await Promise.all([1, 2, 3, 4].map((n) => db.query<{ v: number }>('SELECT $1::int * 2 AS v', [n], { name: 'test_first_use_race' })));
    expect(rows.map((r) => r.rows[0].v)).toEqual([2, 4, 6, 8]);
  });

  it('work inside transactions', async () => {
    const r = await db.transaction((tx) => tx.query('SELECT $1::int + 1 AS v', [1], { name: 'test_tx_add' }));
    expect(r.rows[0].v).toBe(2);
  });
});

describe('insertRow and updateRow (src/db/sql.ts)', () => {
  it('name every column and number every value, with the casts asked for', () => {
    const ins = insertSql('orders', { id: 'a', tags: ['x'], note: null, skipped: undefined, n: 3 }, { casts: { tags: 'jsonb' }, returning: '*' });
    expect(ins.sql).toBe('INSERT INTO orders (id, tags, note, n) VALUES ($1, $2::jsonb, $3, $4) RETURNING *');
    expect(ins.params).toEqual(['a', '["x"]', null, 3]);
    expect(ins.name).toBeUndefined();
    const upd = updateSql('orders', { id: 'a', cancelled_at: null }, { status: 'paid', discount: { code: 'X' } }, { casts: { discount: 'jsonb' } });
    expect(upd.sql).toBe('UPDATE orders SET status = $1, discount = $2::jsonb WHERE id = $3 AND cancelled_at IS NULL');
    expect(upd.params).toEqual(['paid', '{"code":"X"}', 'a']);
  });

  it('derive one stable statement name per statement text', () => {
    const a = insertSql('orders', { id: 1, n: 2 }, { name: true });
    expect(a.name).toMatch(/^ins_orders_[0-9a-f]{10}$/);
    expect(insertSql('orders', { id: 9, n: 8 }, { name: true }).name).toBe(a.name);
    expect(insertSql('orders', { id: 1 }, { name: true }).name).not.toBe(a.name);
  });

  it('refuse anything but plain identifiers and type names in the SQL text', () => {
    expect(() => insertSql('orders', { 'id) VALUES (1); --': 1 })).toThrow(/identifier/);
    expect(() => insertSql('orders; DROP TABLE x', { id: 1 })).toThrow(/identifier/);
    expect(() => updateSql('orders', { id: 1 }, { Status: 'x' })).toThrow(/identifier/);
    expect(() => updateSql('orders', { 'id = id OR true': 1 }, { status: 'x' })).toThrow(/identifier/);
    expect(() => insertSql('orders', { id: 1 }, { casts: { id: 'text); --' } })).toThrow(/type name/);
    expect(() => updateSql('orders', {}, { status: 'x' })).toThrow(/WHERE/);
    expect(() => updateSql('orders', { id: 1 }, { status: undefined })).toThrow(/without changes/);
  });

  it('write and change rows on the database, values only ever as parameters', async () => {
    await db.transaction(async (tx) => {
      await tx.query('CREATE TEMP TABLE sql_helper_rows (id int PRIMARY KEY, name text NOT NULL, doc jsonb, n numeric) ON COMMIT DROP');
      const hostile = "x'); DROP TABLE users; --";
      const { rows } = await insertRow(tx, 'sql_helper_rows', { id: 1, name: hostile, doc: { a: [1, "q'"] }, n: '1.50' }, { casts: { doc: 'jsonb', n: 'numeric' }, returning: '*', name: true });
      expect(rows[0]).toMatchObject({ id: 1, name: hostile, doc: { a: [1, "q'"] } });
      const changed = await updateRow(tx, 'sql_helper_rows', { id: 1 }, { doc: null, name: 'y' }, { casts: { doc: 'jsonb' }, returning: 'name, doc', name: true });
      expect(changed.rows).toEqual([{ name: 'y', doc: null }]);
      const none = await updateRow(tx, 'sql_helper_rows', { id: 2 }, { name: 'z' });
      expect(none.rowCount).toBe(0);
    });
  });
});

describe('database errors (src/db/errors.ts)', () => {
  it('are told apart by kind and constraint, on both drivers', async () => {
    const caught = await db.transaction(async (tx) => {
      await tx.query('CREATE TEMP TABLE err_parent (id int PRIMARY KEY) ON COMMIT DROP');
      await tx.query('CREATE TEMP TABLE err_child (id int PRIMARY KEY, parent int REFERENCES err_parent (id), qty int NOT NULL CHECK (qty > 0)) ON COMMIT DROP');
      const attempt = async (sql: string, params: unknown[]) => {
        await tx.query('SAVEPOINT s');
        const err = await tx.query(sql, params).then(() => null, (e) => e);
        await tx.query('ROLLBACK TO SAVEPOINT s');
        return err;
      };
      await tx.query('INSERT INTO err_parent VALUES (1)');
      return {
        unique: await attempt('INSERT INTO err_parent VALUES ($1)', [1]),
        foreignKey: await attempt('INSERT INTO err_child VALUES (1, $1, 1)', [2]),
        check: await attempt('INSERT INTO err_child VALUES (1, 1, $1)', [0]),
        notNull: await attempt('INSERT INTO err_child VALUES (1, 1, $1)', [null]),
        data: await attempt('SELECT $1::uuid', ['not-a-uuid']),
      };
    });
    expect(isUniqueViolation(caught.unique)).toBe(true);
    expect(isUniqueViolation(caught.unique, 'err_parent_pkey')).toBe(true);
    expect(isUniqueViolation(caught.unique, 'other_key')).toBe(false);
    expect(isForeignKeyViolation(caught.foreignKey, 'err_child_parent_fkey')).toBe(true);
    expect(isCheckViolation(caught.check, 'err_child_qty_check')).toBe(true);
    expect(isNotNullViolation(caught.notNull, 'qty')).toBe(true);
    expect(isDataException(caught.data)).toBe(true);
    expect(dbErrorKind(caught.unique)).toBe('unique_violation');
    expect(isUniqueViolation(caught.foreignKey)).toBe(false);
    expect(dbErrorKind(new Error('duplicate key value violates unique constraint "x"'))).toBeNull();
    expect(isUniqueViolation({ code: '23505' })).toBe(false);
  });
});
