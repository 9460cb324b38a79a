// Text shown to a buyer in an order the service chooses (shipping apps by handle, zone rates of one
// price by title) is ordered by bytes of its UTF-8, the order of PostgreSQL's `COLLATE "C"`, so
// the order is the same on PGlite (always C) and on a PostgreSQL server whatever its collation: a
// linguistic one (en_US.UTF-8, ICU with alternate=shifted) ignores `-` at first, putting `a-c`
// after `ab`, where bytes put it before. SQL says `COLLATE "C"` on every such ORDER BY; JavaScript
// uses `byBytes`, since `<` on strings compares UTF-16 code units, which put U+10000 and above
// (surrogate pairs, D800-DFFF) before U+E000-U+FFFF, unlike UTF-8.

/** Compares as the UTF-8 bytes (code points) of `a` and `b` compare: -1, 0 or 1. */
export function byBytes(a: string, b: string): -1 | 0 | 1 {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // The first unit that differs decides; from U+D800 up, surrogates (D800-DFFF, code points of
    // U+10000 and above) go after U+E000-U+FFFF, as their code points do.
    if (x >= 0xd800 && y >= 0xd800) {
      x += x >= 0xe000 ? -0x800 : 0x2000;
      y += y >= 0xe000 ? -0x800 : 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
