// ISO 3166-1 alpha-2 country codes from a maintained list (i18n-iso-countries). Its index module
// is imported rather than the package entry, which would load the country names of every language.
import countries from 'i18n-iso-countries/index.js';

const ALPHA2 = new Set(Object.keys(countries.getAlpha2Codes()));

/** The code in upper case when it is an assigned alpha-2 code ("us" -> "US"), else null. */
export function alpha2(code: unknown): string | null {
  if (typeof code !== 'string') return null;
  const trimmed = code.trim();
  // Two ASCII letters before upper-casing: Unicode case mapping turns non-ASCII forms into ASCII
  // codes ('ﬁ' -> 'FI', 'ı' -> 'I', 'ſ' -> 'S'), which are not ISO 3166-1 alpha-2 codes (C15.1, C6.10).
  if (!/^[A-Za-z]{2}$/.test(trimmed)) return null;
  const upper = trimmed.toUpperCase();
  return ALPHA2.has(upper) ? upper : null;
}
