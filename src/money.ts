// Money is integer minor units inside the service and a two-decimal string at the edge (C5.2).

export function formatMinor(minor: number | bigint): string;
export function formatMinor(minor: number | bigint | null | undefined): string | null;
export function formatMinor(minor: number | bigint | null | undefined): string | null {
  if (minor === null || minor === undefined) return null;
  // Sums (a developer's ledger balance) may pass 2^53 cents, where a number is no longer exact.
  if (typeof minor === 'bigint') {
    const abs = minor < 0n ? -minor : minor;
    return `${minor < 0n ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
  }
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** An amount whose minor units are past 2^53 - 1: no longer an exact number (C5.2). */
export class AmountTooLargeError extends RangeError {}

/**
 * Parse a decimal string or number ("19.9", 19.9, "19.90") into minor units without float sums.
 * Refused (RangeError), never rounded: more than two decimals, in a string or in a JSON number
 * (toFixed(2) once turned 9.999 into 10.00 that nobody sent, where "9.999" was refused), and
 * (AmountTooLargeError) minor units past Number.MAX_SAFE_INTEGER, which would come back inexact.
 * The one reader of money for every route, so no caller needs a rule of its own.
 */
export function parseMoney(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  let minor: number;
  if (typeof value === 'number') {
    // value * 100 carries binary noise (19.9 * 100 = 1989.9999999999998, 0.1 + 0.2 sent as
    // 0.30000000000000004): within that noise of a whole number of hundredths is that number. The
    // noise grows with the magnitude (a few ulps), a third decimal is at least 0.1 away.
    const scaled = value * 100;
    const cents = Math.round(scaled);
    if (!Number.isFinite(value) || Math.abs(scaled - cents) > Math.max(1e-6, Math.abs(scaled) * 1e-14)) {
      throw new RangeError(`not a money amount with at most two decimals: ${value}`);
    }
    minor = cents + 0; // never -0
  } else {
    const m = /^(-)?(\d+)(?:\.(\d{1,2}))?$/.exec(String(value).trim());
    if (!m) throw new RangeError(`not a money amount: ${String(value)}`);
    const abs = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'));
    minor = m[1] ? -abs : abs;
  }
  if (!Number.isSafeInteger(minor)) throw new AmountTooLargeError(`money amount too large: ${String(value)}`);
  return minor;
}
