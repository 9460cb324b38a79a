// A checkout's state (C15.1): its lines priced from the catalog with the discount code as at
// checkout, then what its cart functions last gave (payment methods, validation errors, automatic
// discounts, C11.3) and the chosen rate's shipping, with the totals an order of it would have.
// The reads, changes and completion of checkout.service.ts all see a checkout through it.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { AppError, badRequest } from '../http/errors.js';
import { hundredthsStep } from '../currencies.js';
import { formatMinor, parseMoney } from '../money.js';
import { findCustomerIdByEmail } from '../customers/customers.repo.js';
import { computeTotals, MAX_ORDER_SAID, totalsTooLarge, type AppliedDiscount, type PriceLine } from '../orders/pricing.js';
import { checkDiscountCode } from '../orders/order-create.js';
import { computeAutomaticDiscounts } from '../functions/operations.js';
import { priceCheckoutLines, type PricedLine, type ValidationProblem } from './checkout-lines.js';
import type { CheckoutState } from './checkout-view.js';
import { paymentMethodsOf } from './payment-methods.js';
import type { FunctionResults } from './checkout-functions.js';
import type { CatalogLine, CheckoutRow } from './checkouts.repo.js';

// A rate's price (a decimal string, C5.2) in hundredths, exactly: through a binary double, a live
// rate's price above about 10^12 came back a hundredth off (C15.3 allows any safe integer).
export const minorOf = (price: string) => parseMoney(price)!;

/** The checkout priced now, before its functions: lines from the catalog and the discount code as at checkout. */
export interface PricedCheckout {
  row: CheckoutRow;
  lines: PricedLine[];
  problems: ValidationProblem[];
  applied: AppliedDiscount | null;
  priceLines: PriceLine[];
  step: number;
}

/**
 * `catalog`: the lines' catalog facts when already read (`findCheckoutForQuote`).
 */
export async function pricedCheckout(deps: Deps, q: Queryable, row: CheckoutRow, catalog?: (CatalogLine | null)[]): Promise<PricedCheckout> {
  // A completed checkout is the record of its order (C15.1): priced as its order was, not from the
  // catalog and the code of now (a price moved, a product archived, the code's last use taken by
  // this very order), which showed another total than the order's and validation errors on a
  // checkout nothing can change any more. Its functions' results are the completion's (stored with it).
  if (row.completed_pricing) return pricedAs(row, row.completed_pricing.lines, [], row.completed_pricing.applied);
  const { lines, problems } = await priceCheckoutLines(q, row.store_id, row.line_items, row.currency, catalog);
  let applied: AppliedDiscount | null = null;
  if (row.discount_code) {
    const itemsMinor = lines.reduce((s, l) => s + l.unitMinor * l.quantity, 0);
    const customerId = row.email ? await findCustomerIdByEmail(q, row.store_id, row.email) : null;
    try {
      applied = await checkDiscountCode(q, row.store_id, row.discount_code, { itemsMinor, lines, customerId, email: row.email, now: deps.clock.now() }, { checkout: 'shown' });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      problems.push({ message: `The discount code ${err.message.replace(/^discount_code /, '')}`, target: 'discount_code' });
    }
  }
  return pricedAs(row, lines, problems, applied);
}

function pricedAs(row: CheckoutRow, lines: PricedLine[], problems: ValidationProblem[], applied: AppliedDiscount | null): PricedCheckout {
  const priceLinesOf = lines.map((l) => ({ productId: l.productId, unitMinor: l.unitMinor, quantity: l.quantity, taxable: true }));
  return { row, lines, problems, applied, priceLines: priceLinesOf, step: hundredthsStep(row.currency) };
}

/**
 * C5.2: lines whose prices times quantities come past what an order can hold (MAX_ORDER_MINOR,
 * 2^53 - 1 hundredths) are refused when the buyer sends them, with a 400 and nothing written, as
 * `POST /orders` refuses them: past it the checkout's sums are no longer exact, and the buyer and
 * the functions' `input.checkout` would be shown made-up amounts for a checkout that could never
 * complete. (A checkout that comes past it later, a price raised under it, shows the cart's
 * validation error instead: `finishState`.) The lines alone are weighed, as the totals of an order
 * of them with no shipping, discount or tax: the one check of pricing.ts, on what the buyer sent.
 */
export function assertLinesFitAnOrder(priced: PricedCheckout): void {
  if (totalsTooLarge(computeTotals(priced.priceLines, 0, null, null))) {
    throw badRequest(`The checkout's lines come to more than an order can hold (${MAX_ORDER_SAID}); lower the quantities`, { line_items: ['total too large'] });
  }
}

const TOO_LARGE_PROBLEM: ValidationProblem = { message: "The checkout's total is above the largest amount an order can hold", target: 'cart' };

/**
 * The checkout as it stands with what its functions last gave (`results`, null when none ran):
 * the payment methods they left, their validation errors, and their automatic discounts after the
 * code (C11.3), with the chosen rate's shipping. Pure.
 */
export function finishState(p: PricedCheckout, results: FunctionResults | null): CheckoutState {
  const { row, lines, applied, step } = p;
  const requiresShipping = lines.some((l) => l.requiresShipping);
  // A chosen rate counts only while something ships: the order completion makes of a checkout
  // whose products stopped requiring shipping has none (the rate stays stored, for when they ship).
  const shippingMinor = requiresShipping && row.shipping_rate ? minorOf(row.shipping_rate.price) : 0;
  const withCode = computeTotals(p.priceLines, shippingMinor, applied, null, step);
  const automatic = results?.discountOutputs.length
    ? computeAutomaticDiscounts(lines.map((l, i) => ({ id: l.id, lineMinor: withCode.lines[i].lineMinor, codeDiscountMinor: withCode.lines[i].discountMinor })), results.discountOutputs, step)
    : [];
  const perLine = lines.map((_, i) => automatic.reduce((s, a) => s + a.lineAmountsMinor[i], 0));
  const totals = automatic.length ? computeTotals(p.priceLines, shippingMinor, applied, null, step, perLine) : withCode;
  const discounts: CheckoutState['discounts'] = [];
  if (applied) {
    discounts.push({
      type: 'discount_code',
      code: applied.code,
      title: applied.code,
      value: applied.type === 'Percentage' ? (applied.percentBp! / 100).toFixed(2) : applied.type === 'Flat' ? formatMinor(applied.amountMinor ?? 0) : '100.00',
      // FreeShipping is 100 percent (of the shipping), as the order it becomes shows it (order-view.ts).
      value_type: applied.type === 'Flat' ? 'fixed_amount' : 'percentage',
      amount: formatMinor(withCode.totalDiscountMinor),
    });
  }
  for (const a of automatic) discounts.push({ type: 'automatic', code: null, title: a.title, value: a.value, value_type: a.valueType, amount: formatMinor(a.amountMinor) });
  return {
    row,
    lines,
    // Past what an order can hold (pricing.ts MAX_ORDER_MINOR), said before completion refuses it.
    problems: [...p.problems, ...(totalsTooLarge(totals) ? [TOO_LARGE_PROBLEM] : []), ...(results?.validationErrors ?? [])],
    totals,
    discounts,
    automatic,
    paymentMethods: results?.paymentMethods ?? paymentMethodsOf(),
    requiresShipping,
  };
}

/** The checkout as it stands, with what its functions last gave (a read: no function runs). */
export async function stateOf(deps: Deps, q: Queryable, row: CheckoutRow, catalog?: (CatalogLine | null)[]): Promise<CheckoutState> {
  return finishState(await pricedCheckout(deps, q, row, catalog), row.function_results);
}
