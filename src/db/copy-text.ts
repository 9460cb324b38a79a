// Rows for `COPY ... FROM STDIN` in PostgreSQL's text format: one line per row, columns separated
// by a tab, `\N` for null, and a backslash escape for the four characters that would otherwise end
// a column or a row or start an escape (backslash, tab, newline, carriage return). Every other
// character, `\.` included, is data once its backslash is doubled.
//
// Why COPY: the bulk write of run records (src/functions/function-runs.repo.ts). PostgreSQL reads
// each column with its type's own input function, where a JSON document of rows (jsonb_to_recordset)
// was parsed whole, then each field found in it and turned back into text first. Measured in issue
// 13's bench, alternating runs: database CPU per checkout quote with three functions from 168-185
// to 148-158 µs (docs/decisions.md, fourth session of 2026-11-26).
//
// The text must be storable (src/functions/runtime/storable-text.ts): COPY refuses a NUL like any
// text input does. Values become text as for PGlite's literals (`valueText`, src/db/sql.ts):
// objects as their JSON, for json and jsonb columns.
import { valueText } from './sql.js';

const SPECIAL = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One column's value in COPY text format. */
export function copyValue(value: unknown): string {
  if (typeof value === 'boolean') return value ? 't' : 'f';
  const text = valueText(value);
  if (text === null) return '\\N';
  return SPECIAL.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]) : text;
}

/** One row, its line ending included: rows join with ''. */
export function copyLine(values: readonly unknown[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i ? '\t' : '') + copyValue(values[i]);
  return `${line}\n`;
}
