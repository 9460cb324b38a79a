// Order totals in integer minor units (design.md; C5.2). Pure: no database, no clock.
//
//   line_price        = price x quantity
//   total_discount    = the line's share of a Percentage or Flat discount (largest remainder, so the
//                       shares add up to the discount exactly)
//   final_line_price  = line_price - total_discount
//   subtotal_price    = sum of final_line_price (after discounts, before shipping and tax)
//   shipping_price    = the shipping line's price, 0 with FreeShipping
//   tax_price         = round(taxable final line prices x tax_rate), half up
//   total_discounts   = line discounts + shipping waived by FreeShipping
//   total_price       = subtotal_price + shipping_price + tax_price
// so total_price = sum(line_price) + original shipping + tax - total_discounts, to the cent.

export interface PriceLine {
  /** Product UUID, null for a custom line item. */
  productId: string | null;
  unitMinor: number;
  quantity: number;
  taxable: boolean;
}

/** The applied discount, as stored on the order (`orders.discount`). */
export interface AppliedDiscount {
  code: string;
  type: 'Percentage' | 'Flat' | 'FreeShipping';
  /** Percentage in hundredths of a percent (12.5 % = 1250). */
  percentBp: number | null;
  amountMinor: number | null;
  /** Product UUIDs the discount is limited to; empty = every line. */
  applyOn: string[];
}

export interface LineTotals {
  lineMinor: number;
  discountMinor: number;
  finalLineMinor: number;
}

export interface OrderTotals {
  lines: LineTotals[];
  itemsMinor: number;
  lineDiscountMinor: number;
  subtotalMinor: number;
  shippingOriginalMinor: number;
  shippingMinor: number;
  shippingDiscountMinor: number;
  totalDiscountMinor: number;
  taxMinor: number;
  totalMinor: number;
}

/** a x b / c rounded half up, for non-negative integers, exact beyond 2^53 intermediates. */
export function mulDivRound(a: number, b: number, c: number): number {
  const n = BigInt(a) * BigInt(b);
  const d = BigInt(c);
  return Number((2n * n + d) / (2n * d));
}

/** Splits `amount` over `weights` proportionally; the shares add up to `amount` exactly. */
export function allocate(amount: number, weights: number[]): number[] {
  const total = weights.reduce((s, w) => s + w, 0);
  if (amount === 0 || total === 0) return weights.map(() => 0);
  const shares = weights.map((w) => Number((BigInt(amount) * BigInt(w)) / BigInt(total)));
  let left = amount - shares.reduce((s, x) => s + x, 0);
  // Largest remainders first; ties go to the earlier line.
  const order = weights
    .map((w, i) => ({ i, rem: (BigInt(amount) * BigInt(w)) % BigInt(total) }))
    .filter((x) => weights[x.i] > 0)
    .sort((a, b) => (a.rem === b.rem ? a.i - b.i : a.rem > b.rem ? -1 : 1));
  for (let k = 0; left > 0; k = (k + 1) % order.length, left--) shares[order[k].i]++;
  return shares;
}

export function eligible(line: Pick<PriceLine, 'productId'>, discount: AppliedDiscount): boolean {
  if (discount.applyOn.length === 0) return true;
  return line.productId !== null && discount.applyOn.includes(line.productId);
}

/**
 * Tax rate as parts per million (0.0825 -> 82500). `step` is the currency's smallest amount in
 * hundredths (1 for USD, 100 for JPY: src/currencies.ts): computed discounts and tax are whole
 * steps, so a yen order never gets a fraction of a yen.
 */
export function computeTotals(
  lines: PriceLine[],
  shippingMinor: number,
  discount: AppliedDiscount | null,
  taxRatePpm: number | null,
  step = 1,
  /** Per line, taken off after the code: the automatic discounts of C11.3, never more than what is left of a line. */
  automaticLineMinor: readonly number[] = [],
): OrderTotals {
  const lineMinors = lines.map((l) => l.unitMinor * l.quantity);
  const itemsMinor = lineMinors.reduce((s, x) => s + x, 0);
  let lineDiscounts = lines.map(() => 0);
  let shippingDiscountMinor = 0;
  if (discount) {
    const weights = lines.map((l, i) => (eligible(l, discount) ? lineMinors[i] : 0));
    const base = weights.reduce((s, x) => s + x, 0);
    // The discount is a whole number of steps, shared out in whole steps.
    const steps = discount.type === 'Percentage'
      ? mulDivRound(base, discount.percentBp ?? 0, 10_000 * step)
      : Math.floor(Math.min(discount.amountMinor ?? 0, base) / step);
    if (discount.type !== 'FreeShipping') lineDiscounts = allocate(steps, weights).map((n) => n * step);
    else shippingDiscountMinor = shippingMinor;
  }
  lineDiscounts = lineDiscounts.map((d, i) => d + Math.max(0, Math.min(automaticLineMinor[i] ?? 0, lineMinors[i] - d)));
  const out = lines.map((_, i) => ({ lineMinor: lineMinors[i], discountMinor: lineDiscounts[i], finalLineMinor: lineMinors[i] - lineDiscounts[i] }));
  const lineDiscountMinor = lineDiscounts.reduce((s, x) => s + x, 0);
  const subtotalMinor = itemsMinor - lineDiscountMinor;
  const taxable = out.reduce((s, l, i) => s + (lines[i].taxable ? l.finalLineMinor : 0), 0);
  const taxMinor = taxRatePpm === null ? 0 : mulDivRound(taxable, taxRatePpm, 1_000_000 * step) * step;
  const charged = shippingMinor - shippingDiscountMinor;
  return {
    lines: out,
    itemsMinor,
    lineDiscountMinor,
    subtotalMinor,
    shippingOriginalMinor: shippingMinor,
    shippingMinor: charged,
    shippingDiscountMinor,
    totalDiscountMinor: lineDiscountMinor + shippingDiscountMinor,
    taxMinor,
    totalMinor: subtotalMinor + charged + taxMinor,
  };
}

/**
 * The largest amount an order or a checkout can come to, in minor units: 2^53 - 1, the last
 * integer a JavaScript number holds exactly (C5.2: money is exact). Prices are bounded one by one
 * (catalog input), but a price times a quantity, summed over the lines, is not: past this the sums
 * above would be rounded, and the database's bigint would refuse them (a 500).
 */
export const MAX_ORDER_MINOR = Number.MAX_SAFE_INTEGER;

/** Whether any amount of these totals is past MAX_ORDER_MINOR (and so not exact). */
export function totalsTooLarge(t: OrderTotals): boolean {
  return [t.itemsMinor, t.shippingOriginalMinor, t.taxMinor, t.totalMinor].some((m) => m > MAX_ORDER_MINOR);
}

/** MAX_ORDER_MINOR as the refusals of an order or a checkout past it say it. */
export const MAX_ORDER_SAID = `${Math.floor(MAX_ORDER_MINOR / 100)}.${MAX_ORDER_MINOR % 100} in hundredths of the currency`;

/** The refusal of an order whose totals are past MAX_ORDER_MINOR: a 400, as any other bad line. */
export const TOTAL_TOO_LARGE = `The order's total is above the largest amount an order can hold (${MAX_ORDER_SAID})`;

/**
 * The per-unit price after discounts, rounded half up to a whole `step` (the currency's smallest
 * amount in hundredths, currencies.ts hundredthsStep): final_line_price is the exact figure. In
 * hundredths alone a yen line of 471 over 7 units showed a final_price of 67.29, an amount no yen
 * price can be.
 */
export function finalUnitMinor(finalLineMinor: number, quantity: number, step = 1): number {
  return quantity > 0 ? mulDivRound(finalLineMinor, 1, quantity * step) * step : 0;
}

/** "0.0825" / 0.0825 -> 82500 parts per million; null when not a rate in [0, 1] with at most 6 decimals. */
export function parseTaxRate(value: unknown): number | null {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : typeof value === 'string' ? value.trim() : '';
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) return null;
  const ppm = Number(m[1]) * 1_000_000 + Number((m[2] ?? '').padEnd(6, '0'));
  return ppm <= 1_000_000 ? ppm : null;
}

/** 82500 -> "0.0825" (the rate as a canonical decimal). */
export function formatTaxRate(ppm: number): string {
  const whole = Math.floor(ppm / 1_000_000);
  const frac = String(ppm % 1_000_000).padStart(6, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : String(whole);
}

/** A percentage (numeric, at most 2 decimals) as hundredths of a percent: "12.5" -> 1250. */
export function percentToBp(value: unknown): number {
  const text = typeof value === 'number' ? value.toFixed(2) : String(value).trim();
  const m = /^(\d+)(?:\.(\d{1,2})\d*)?$/.exec(text);
  if (!m) return 0;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}
