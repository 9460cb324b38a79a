// Text as people and JSON Schema count it.
import { INVISIBLE_CHARACTERS } from './functions/runtime/visible-text.js';

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

/**
 * Whether `text` is past a limit of `max` characters: the one rule every hand-checked text limit
 * uses, so a field counts as its route schema's `maxLength` does (Ajv counts code points too).
 * Counts only when it has to: a code point is one or two UTF-16 units, so `length` up to `max` is
 * always within and past twice `max` never is (a 1 MB body is not walked for a 255 limit).
 */
export function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (text.length > 2 * max) return true;
  return codePoints(text) > max;
}

/** Whether `text` falls short of `min` characters (code points), as `minLength` counts. */
export function shorterThan(text: string, min: number): boolean {
  if (text.length < min) return true;
  if (text.length >= 2 * min) return false;
  return codePoints(text) < min;
}

/** `text` cut to its first `max` characters (code points), so a cut never splits a surrogate pair. */
export function cutTo(text: string, max: number): string {
  if (!longerThan(text, max)) return text;
  let units = 0;
  let n = 0;
  for (const ch of text) {
    if (n++ === max) break;
    units += ch.length;
  }
  return text.slice(0, units);
}

/**
 * Only white space, format characters (Cf: zero-width space, word joiner, byte order mark, bidi
 * marks, soft hyphen) and default-ignorable ones (Hangul fillers, variation selectors, tags).
 */
const INVISIBLE_ONLY = new RegExp(`^[${INVISIBLE_CHARACTERS}]*$`, 'u');

/**
 * Whether required text is blank: nothing is left once the characters no one sees are removed.
 * `trim()` keeps U+200B, U+2060, U+180E, U+3164 and the like, so a title of one zero-width space
 * passed "can't be blank" (C14.1) and listed as an empty-looking product. This judges only: text
 * that is not blank is stored as sent (trimmed as before), its invisible characters kept, since
 * inside a word they mean something (a joiner in an emoji, a soft hyphen). The one rule for every
 * required text field: `str()` (src/catalog/input.ts), `requiredText()` (src/content/fields.ts) and
 * a metafield's value (src/metafields/types.ts) ask it.
 */
export function isBlankText(value: string): boolean {
  return INVISIBLE_ONLY.test(value);
}
