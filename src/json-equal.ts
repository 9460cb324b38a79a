// Equality of JSON-shaped values (null, booleans, numbers, strings, arrays, plain objects), by
// content, keys in any order. For telling whether what a pure function was given last time is what
// it is given now; node:util's isDeepStrictEqual answers the same for such values at about four
// times the cost (it handles every kind of object). A key present with `undefined` and a key absent
// differ here, which can only make a caller recompute, never reuse wrongly.
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key)) continue;
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
    keys++;
  }
  for (const key in y) if (Object.hasOwn(y, key)) keys--;
  return keys === 0;
}
