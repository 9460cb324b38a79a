// Exact money arithmetic for billing (C10.2, C10.3): integer minor units times a decimal rate,
// rounded half-even, all in BigInt. Rates arrive as JavaScript numbers (config) or numeric strings
// (database); both are read as exact decimals, never multiplied as binary floats.

/** value = units / 10^scale, non-negative. */
export interface Decimal {
  units: bigint;
  scale: number;
}

const DECIMAL_RE = /^(\d+)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;

/** "0.2", "1.08", "0.01200", 0.2, 1e-7 -> exact decimal. Negative or malformed -> RangeError. */
export function parseDecimal(value: string | number): Decimal {
  // String(number) is the shortest text that reads back as the same double: 0.2 -> "0.2".
  const text = typeof value === 'number' ? String(value) : value.trim();
  const m = DECIMAL_RE.exec(text);
  if (!m || (typeof value === 'number' && !Number.isFinite(value))) throw new RangeError(`not a non-negative decimal: ${String(value)}`);
  const fraction = m[2] ?? '';
  let units = BigInt(m[1] + fraction);
  let scale = fraction.length - Number(m[3] ?? 0);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return normalise({ units, scale });
}

function normalise(d: Decimal): Decimal {
  let { units, scale } = d;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale--;
  }
  return { units, scale };
}

/** Canonical text of a decimal ("1.08", "0.2", "3"), as stored in numeric columns. */
export function decimalText(d: Decimal): string {
  if (d.scale === 0) return d.units.toString();
  const digits = d.units.toString().padStart(d.scale + 1, '0');
  return `${digits.slice(0, -d.scale)}.${digits.slice(-d.scale)}`;
}

/** n / d rounded half to even; n >= 0, d > 0. */
export function divHalfEven(n: bigint, d: bigint): bigint {
  if (n < 0n || d <= 0n) throw new RangeError('divHalfEven takes n >= 0 and d > 0');
  const q = n / d;
  const twiceRest = (n % d) * 2n;
  if (twiceRest > d || (twiceRest === d && q % 2n === 1n)) return q + 1n;
  return q;
}

/** minor x rate, rounded half-even to whole minor units. */
export function mulHalfEven(minor: number, rate: Decimal): number {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new RangeError(`not a non-negative amount in minor units: ${minor}`);
  return Number(divHalfEven(BigInt(minor) * rate.units, 10n ** BigInt(rate.scale)));
}

export interface Split {
  commission: number;
  developerAmount: number;
}

/**
 * C10.2: commission = amount x rate rounded half-even to cents; the developer gets the rest, so
 * commission + developerAmount = amount always.
 */
export function splitCommission(amountMinor: number, rate: Decimal): Split {
  if (rate.units > 10n ** BigInt(rate.scale)) throw new RangeError('a commission rate is at most 1');
  const commission = mulHalfEven(amountMinor, rate);
  return { commission, developerAmount: amountMinor - commission };
}

export interface UsdRollup {
  usdAmount: number;
  usdDeveloperAmount: number;
  /** usdAmount - usdDeveloperAmount: what the platform keeps, in USD. */
  usdCommission: number;
}

/**
 * C10.3: a charge in USD minor units at `fxRate` (USD per unit of the charge currency). The amount
 * and the developer's share are converted separately and the commission is their difference, so
 * the ledger entry of a charge balances exactly.
 */
export function toUsd(amountMinor: number, developerAmountMinor: number, fxRate: Decimal): UsdRollup {
  const usdAmount = mulHalfEven(amountMinor, fxRate);
  const usdDeveloperAmount = mulHalfEven(developerAmountMinor, fxRate);
  return { usdAmount, usdDeveloperAmount, usdCommission: usdAmount - usdDeveloperAmount };
}
