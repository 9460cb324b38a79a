// Text PostgreSQL can store, as text and inside jsonb: no NUL (U+0000; refused in text, 22021, and
// in jsonb, 22P05) and no unpaired UTF-16 surrogate (not a Unicode character: jsonb refuses it,
// 22P02, and UTF-8 for a text column silently turns it into U+FFFD). One rule for everything that
// reaches the database: what clients send (src/http/input-guard.ts refuses it with a 400) and what
// third parties answer, which the platform keeps as records (webhook receivers' response bodies,
// shipping apps' rate replies, function outputs and error messages). A single unstorable string in
// a batched write fails the whole batch, other apps' records with it.
//
// Here, in the function runtime (which imports nothing from the rest of the service), so that the
// runtime's own output check and the app SDK's local runs apply the very same rule.

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** Whether the string can be stored as text and inside jsonb. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/**
 * The string with each NUL and each unpaired surrogate replaced by U+FFFD (the replacement
 * character), the same length: for text kept as a record of what a third party said.
 */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, '\ufffd') : text;
}

/**
 * Where in a JSON value (`output.operations[0].rename.title`, `... key` for an object key) the first
 * unstorable string is, or null when there is none. Iterative: depth cannot overflow it.
 */
export function unstorableTextAt(value: unknown, root: string): string | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: root }];
  while (stack.length) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return path;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: `${path}[${i}]` });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      if (!isStorableText(keys[i])) return `${path} key`;
      stack.push({ value: (v as Record<string, unknown>)[keys[i]], path: `${path}.${keys[i]}` });
    }
  }
  return null;
}
