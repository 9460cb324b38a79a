// Money inside the service is in hundredths (src/money.ts, C5.2); shipping apps speak in the
// currency's own minor units (C15.3: cents for USD, yen for JPY, fils for BHD). These convert
// between the two exactly, or say that they cannot.
import { minorDigits } from '../currencies.js';

/**
 * Hundredths as the currency's minor units. For a currency with fewer than two decimals (JPY) the
 * service's amounts are whole already (C7.1 refuses others), so the division is exact; were it not,
 * it rounds half up.
 */
export function toCurrencyMinor(hundredths: number, currency: string): number {
  const digits = minorDigits(currency);
  if (digits >= 2) return hundredths * 10 ** (digits - 2);
  const step = 10 ** (2 - digits);
  return Math.floor((hundredths + step / 2) / step);
}

/**
 * The currency's minor units as hundredths; null when the amount cannot be written with two
 * decimals (1.234 BHD) or is too large to be money here.
 */
export function fromCurrencyMinor(minor: bigint, currency: string): number | null {
  const digits = minorDigits(currency);
  let hundredths: bigint;
  if (digits <= 2) hundredths = minor * 10n ** BigInt(2 - digits);
  else {
    const step = 10n ** BigInt(digits - 2);
    if (minor % step !== 0n) return null;
    hundredths = minor / step;
  }
  return hundredths <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(hundredths) : null;
}
