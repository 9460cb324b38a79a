// Weights without floating point. A variant's `weight` is a decimal (numeric column) in g, kg, lb
// or oz; zones bound the total in kg with up to four decimals (C15.2). Every conversion factor is
// itself an exact decimal (1 lb = 0.45359237 kg by definition, 1 oz = 1/16 lb = 0.028349523125
// kg), so weights are kept as exact decimals (a bigint and a power of ten) and summed and compared
// with no rounding at all: a zone bound of 0.4536 kg against one pound (0.45359237 kg) is decided
// exactly. The only rounding is `gramsPerUnit`, which the rate request needs as a whole number.

/** An exact decimal: `units` x 10^-`scale`. */
export interface Decimal {
  units: bigint;
  scale: number;
}

export const WEIGHT_UNITS = ['g', 'kg', 'lb', 'oz'] as const;
export type WeightUnit = (typeof WEIGHT_UNITS)[number];

const KG_PER_UNIT: Record<WeightUnit, Decimal> = {
  g: { units: 1n, scale: 3 },
  kg: { units: 1n, scale: 0 },
  lb: { units: 45359237n, scale: 8 },
  oz: { units: 28349523125n, scale: 12 },
};

export const ZERO: Decimal = { units: 0n, scale: 0 };

/**
 * A decimal from the database (numeric as text, or a number) or a bound: plain or exponent
 * notation (`1e-7`, what String() gives for small numbers). Null for anything else.
 */
export function parseDecimal(value: string | number | null | undefined): Decimal | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(String(value).trim());
  if (!m || (m[2] === '' && !m[3])) return null;
  const digits = `${m[2]}${m[3] ?? ''}` || '0';
  let scale = (m[3] ?? '').length - Number(m[4] ?? 0);
  let units = BigInt(digits);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { units: m[1] === '-' ? -units : units, scale };
}

const rescale = (d: Decimal, scale: number): bigint => d.units * 10n ** BigInt(scale - d.scale);

export function add(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: rescale(a, scale) + rescale(b, scale), scale };
}

export function times(a: Decimal, b: Decimal): Decimal {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

export function compare(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const scale = Math.max(a.scale, b.scale);
  const x = rescale(a, scale);
  const y = rescale(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * One unit's weight in kg. A weight without a unit is taken in kg, the unit zones are written in;
 * no weight (or one that is not a number) weighs nothing.
 */
export function kgOf(weight: string | number | null, unit: string | null): Decimal {
  const w = parseDecimal(weight);
  if (!w || w.units < 0n) return ZERO;
  return times(w, KG_PER_UNIT[(unit ?? 'kg') as WeightUnit] ?? KG_PER_UNIT.kg);
}

/** One unit's weight in whole grams, rounded half up (C15.3 `items[].grams`). */
export function gramsPerUnit(weight: string | number | null, unit: string | null): number {
  const g = times(kgOf(weight, unit), { units: 1000n, scale: 0 });
  const whole = g.units / 10n ** BigInt(g.scale);
  const rest = g.units - whole * 10n ** BigInt(g.scale);
  return Number(rest * 2n >= 10n ** BigInt(g.scale) ? whole + 1n : whole);
}
