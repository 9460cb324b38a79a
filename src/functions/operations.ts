// What the outputs of a target's functions do to a checkout (C11.3), applied in activation order.
// Pure: no database, no clock. The outputs have already passed the target's schema
// (src/functions/runtime/targets.ts); an operation naming an unknown handle or line is ignored.
import { allocate, mulDivRound } from '../orders/pricing.js';

type Operation = Record<string, Record<string, unknown>>;
/** A successful run's output: `{ operations: [...] }`. */
export interface FunctionOutput {
  operations: Operation[];
}

const operationsOf = (outputs: readonly FunctionOutput[]) => outputs.flatMap((o) => o.operations);

/**
 * hide, rename and move (delivery options, payment methods): each function's operations in turn,
 * over the list as the previous ones left it. A move's index past the end moves to the end.
 */
export function applyTransforms<T extends { handle: string; title: string }>(items: readonly T[], outputs: readonly FunctionOutput[]): T[] {
  let list = items.map((item) => ({ ...item }));
  for (const op of operationsOf(outputs)) {
    if (op.hide) list = list.filter((item) => item.handle !== op.hide.handle);
    else if (op.rename) {
      const item = list.find((i) => i.handle === op.rename.handle);
      if (item) item.title = String(op.rename.title);
    } else if (op.move) {
      const at = list.findIndex((i) => i.handle === op.move.handle);
      if (at === -1) continue;
      const [item] = list.splice(at, 1);
      list.splice(Math.min(Number(op.move.index), list.length), 0, item);
    }
  }
  return list;
}

export interface ValidationError {
  message: string;
  target: string;
}

/** validationAdd: the errors whose target is `cart` or one of the checkout's line ids. */
export function collectValidationErrors(outputs: readonly FunctionOutput[], lineIds: readonly string[]): ValidationError[] {
  const errors: ValidationError[] = [];
  for (const op of operationsOf(outputs)) {
    for (const e of (op.validationAdd?.errors as ValidationError[] | undefined) ?? []) {
      if (e.target === 'cart' || lineIds.includes(e.target)) errors.push({ message: e.message, target: e.target });
    }
  }
  return errors;
}

export interface DiscountLine {
  id: string;
  /** price x quantity, in hundredths. */
  lineMinor: number;
  /** What the discount code already takes off this line. */
  codeDiscountMinor: number;
}

export interface AutomaticDiscount {
  title: string;
  valueType: 'percentage' | 'fixed_amount';
  /** The percentage, or the fixed amount per line or for the order, as a decimal string. */
  value: string;
  /** What it takes off each line (in the order of the lines given). */
  lineAmountsMinor: number[];
  amountMinor: number;
}

type DiscountValue = { percentage?: number; fixedAmount?: string };

const min = (a: bigint, b: bigint) => (a < b ? a : b);

/**
 * "5", "5.00", "4.999" -> hundredths, half up (the output schema allows up to 6 decimals). A
 * bigint: the schema allows 15 integer digits, and 10^15 hundredths is past the doubles' exact
 * integers (C5.2: money without binary floating point), so "999999999999999.99" came back as
 * 100000000000000000 and its `value` as "1000000000000000.00".
 */
function hundredthsOf(decimal: string): bigint {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(decimal);
  if (!m) return 0n;
  const frac = (m[2] ?? '').padEnd(3, '0');
  return BigInt(m[1]) * 100n + BigInt(frac.slice(0, 2)) + (Number(frac[2]) >= 5 ? 1n : 0n);
}

/**
 * A function's percentage (a JSON number, a double, 0-100) as millionths of the amount (ten
 * thousandths of a percent, as tax rates are kept: src/orders/pricing.ts parseTaxRate), rounded
 * half up on the number's own decimal digits (its shortest form, what the function wrote: 1.00005
 * is 10001, not the 10000 that `1.00005 * 10000` gives in binary). Hundredths of a percent were
 * too coarse: 100/3 % of 500.00 came to 166.65 rather than 166.67, and 0.004 % to nothing.
 * A number JavaScript writes with an exponent is below 1e-6 (the schema caps it at 100): 0.
 */
export function percentagePpm(percentage: number): number {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(String(percentage));
  if (!m) return 0;
  const frac = (m[2] ?? '').padEnd(5, '0');
  return Number(m[1]) * 10_000 + Number(frac.slice(0, 4)) + (Number(frac[4]) >= 5 ? 1 : 0);
}

/** Millionths as the percentage they are: up to 4 decimals, at least 2 (333333 -> "33.3333", 100000 -> "10.00"). */
export function percentageText(ppm: number): string {
  const frac = String(ppm % 10_000).padStart(4, '0').replace(/0{1,2}$/, (zeros, at: number) => (at >= 2 ? '' : zeros));
  return `${Math.floor(ppm / 10_000)}.${frac}`;
}

/** Hundredths as a decimal string with two decimals, exactly. */
const hundredthsText = (h: bigint) => `${h / 100n}.${String(h % 100n).padStart(2, '0')}`;

/**
 * orderDiscountAdd and productDiscountAdd (C11.3), after the discount code, in activation order.
 * A percentage is of the subtotal (of each named line for a product discount), never of what other
 * discounts left; a product discount's fixed amount applies to each named line. Each is capped by
 * what is left: a line's discounts never exceed the line, and so the total never exceeds the
 * subtotal. An order discount is shared over the lines by what is left of each. `step` is the
 * currency's smallest amount in hundredths (100 for JPY): amounts are whole steps.
 */
export function computeAutomaticDiscounts(lines: readonly DiscountLine[], outputs: readonly FunctionOutput[], step = 1): AutomaticDiscount[] {
  const left = lines.map((l) => Math.max(0, l.lineMinor - l.codeDiscountMinor));
  const itemsMinor = lines.reduce((s, l) => s + l.lineMinor, 0);
  const out: AutomaticDiscount[] = [];
  const stepsOf = (minor: number) => Math.floor(minor / step);
  for (const op of operationsOf(outputs)) {
    const spec = op.orderDiscountAdd ?? op.productDiscountAdd;
    if (!spec) continue;
    const value = spec.value as DiscountValue;
    const percentPpm = value.percentage !== undefined ? percentagePpm(value.percentage) : null;
    const fixedMinor = value.fixedAmount !== undefined ? hundredthsOf(value.fixedAmount) : 0n;
    // Whole steps of the fixed amount, at most what the checkout could ever take (a safe number).
    const fixedSteps = Number(min(fixedMinor / BigInt(step), BigInt(Math.floor(itemsMinor / step))));
    const amounts = lines.map(() => 0);
    if (op.orderDiscountAdd) {
      const wanted = percentPpm !== null ? mulDivRound(itemsMinor, percentPpm, 1_000_000 * step) : fixedSteps;
      const room = left.map(stepsOf);
      const steps = Math.min(wanted, room.reduce((s, x) => s + x, 0));
      allocate(steps, room).forEach((n, i) => (amounts[i] = n * step));
    } else {
      const named = new Set((spec.lineIds as string[]).filter((id) => lines.some((l) => l.id === id)));
      if (!named.size) continue;
      lines.forEach((line, i) => {
        if (!named.has(line.id)) return;
        const wanted = percentPpm !== null ? mulDivRound(line.lineMinor, percentPpm, 1_000_000 * step) : fixedSteps;
        amounts[i] = Math.min(wanted, stepsOf(left[i])) * step;
      });
    }
    amounts.forEach((a, i) => (left[i] -= a));
    out.push({
      title: String(spec.message),
      valueType: percentPpm !== null ? 'percentage' : 'fixed_amount',
      value: percentPpm !== null ? percentageText(percentPpm) : hundredthsText(fixedMinor),
      lineAmountsMinor: amounts,
      amountMinor: amounts.reduce((s, x) => s + x, 0),
    });
  }
  return out;
}
