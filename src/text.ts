// Text as people and JSON Schema count it.

/**
 * Characters as JSON Schema's `maxLength` counts them (code points): `length` counts UTF-16 units,
 * so one emoji is two. The project's text limits ("at most 255 characters") are counted this way.
 * (The function runtime keeps its own copy, src/functions/runtime/limits.ts: it imports nothing of
 * the service's, test/function-runtime.test.ts.)
 */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
