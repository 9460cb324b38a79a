// ISO 4217 currencies and their minor units (issue 10): an order's currency must be a real one, and
// its amounts must be amounts that currency can hold (a yen has no cents).
//
// Amounts are kept in hundredths everywhere (C5.2: two decimals at the edge), so a currency's minor
// units become a step in hundredths: 1 for two decimals (USD), 100 for none (JPY). Currencies with
// three or four decimals (BHD, CLF) take every two-decimal amount, which they can all hold.
import { data } from 'currency-codes';

/**
 * ISO 4217 lists codes that are not money one can price an order in: precious metals, bond-market
 * units, SDR, the testing code XTS and "no currency" XXX (their minor units are "N.A." in ISO's
 * list, shown as 0 by the package). They are refused.
 */
const NOT_MONEY = new Set(['XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XPD', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX']);

const DIGITS = new Map<string, number>(data.filter((c) => !NOT_MONEY.has(c.code)).map((c) => [c.code, c.digits]));

/** The upper-cased code when `value` names an ISO 4217 currency, else null. */
export function isoCurrency(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  // Three ASCII letters before upper-casing: Unicode case mapping turns letters of no ISO 4217 code
  // into ASCII ones ('uſd' -> 'USD', 'ınr' -> 'INR'), as alpha2 refuses 'ﬁ' for FI (countries.ts).
  if (!/^[A-Za-z]{3}$/.test(trimmed)) return null;
  const code = trimmed.toUpperCase();
  return DIGITS.has(code) ? code : null;
}

/** Decimals of the currency's minor unit (JPY 0, USD 2, BHD 3); 2 for a code we do not know. */
export function minorDigits(code: string): number {
  return DIGITS.get(code) ?? 2;
}

/** The smallest amount of the currency in hundredths: 1 for USD, 100 for JPY. */
export function hundredthsStep(code: string): number {
  return 10 ** (2 - Math.min(2, minorDigits(code)));
}

/** Whether an amount in hundredths is a whole number of the currency's minor units. */
export function fitsMinorUnits(hundredths: number, code: string): boolean {
  return hundredths % hundredthsStep(code) === 0;
}

/**
 * An amount in hundredths as the currency's own ISO 4217 minor units, as a payment processor takes
 * it (Stripe's `amount`): 333300 hundredths of JPY are 3333 yen, 1050 hundredths of KWD 10500 fils,
 * USD unchanged. Found in review: the charge sent hundredths, which for yen asked a hundred times
 * the price. An amount that is not a whole number of minor units is rounded half up (prices are
 * checked against the currency's minor units when they are set, so none is expected).
 */
export function isoMinorUnits(hundredths: number, code: string): number {
  const digits = minorDigits(code);
  return digits >= 2 ? hundredths * 10 ** (digits - 2) : Math.round(hundredths / 10 ** (2 - digits));
}
