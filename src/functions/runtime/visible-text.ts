// The platform's one rule for blank text (src/text.ts `isBlankText`), as character classes. It lives
// in the runtime because the runtime imports nothing outside itself (the app SDK ships it), and the
// output schemas (targets.ts) need it; src/text.ts builds its check from the same class.

/** White space, format characters (Cf) and default-ignorable ones: characters no one sees. */
export const INVISIBLE_CHARACTERS = '\\p{White_Space}\\p{Cf}\\p{Default_Ignorable_Code_Point}';

/** A JSON Schema `pattern` (unicode): at least one character someone sees. */
export const VISIBLE_TEXT_PATTERN = `[^${INVISIBLE_CHARACTERS}]`;
