// ISO 3166-1 alpha-2 country codes from a maintained list (i18n-iso-countries). Its index module
// is imported rather than the package entry, which would load the country names of every language.
import { createRequire } from 'node:module';
import countries from 'i18n-iso-countries/index.js';

const require = createRequire(import.meta.url);

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

/** The English names of each country (the short name first, then its other names), read when first needed. */
let english: Map<string, string[]> | null = null;
/** Each English name or other name, lower case, to its code. */
let byName: Map<string, string> | null = null;

function englishNames(): Map<string, string[]> {
  if (!english) {
    const { countries: list } = require('i18n-iso-countries/langs/en.json') as { countries: Record<string, string | string[]> };
    english = new Map(Object.entries(list).map(([code, names]) => [code, Array.isArray(names) ? names : [names]]));
    byName = new Map();
    for (const [code, names] of english) for (const name of names) byName.set(name.toLowerCase(), code);
  }
  return english;
}

/** The country's English short name ("DE" -> "Germany"), or null for a code that is not assigned. */
export function countryName(code: string): string | null {
  const upper = alpha2(code);
  return upper ? (englishNames().get(upper)?.[0] ?? null) : null;
}

/** Whether `name` names the country of `code`: the code itself in any case, or one of its English names. */
export function namesCountry(name: string, code: string): boolean {
  const upper = alpha2(code);
  if (!upper) return false;
  if (alpha2(name) === upper) return true;
  englishNames();
  return byName!.get(name.trim().toLowerCase()) === upper;
}
