// Checkouts (C15.1): create, read, change, shipping rates, complete. A checkout is found by its
// store and token only; it expires 24 hours after creation (service clock): an expired checkout
// can still be read, but no longer changed, quoted or completed (410). Completion takes the order
// exactly as `POST /orders` does (src/orders/order-create.ts: stock, customer, discount code,
// orders/create), under a lock on the checkout row, so two completions at once make one order.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { AppError, conflict, notFound, unprocessable } from '../http/errors.js';
import { uuidv7 } from '../ids.js';
import { hundredthsStep } from '../currencies.js';
import { findCustomerIdByEmail } from '../customers/customers.repo.js';
import { computeTotals } from '../orders/pricing.js';
import { checkDiscountCode, placeOrderInTx, retryingNewCustomer } from '../orders/order-create.js';
import type { LineInput, NewOrderInput, PaymentMethod } from '../orders/order-input.js';
import { orderView } from '../orders/order-view.js';
import { checkAskedLines, priceFoundLines, priceLines, type ValidationProblem } from './checkout-lines.js';
import { readAddress, readEmail, readLines, type CheckoutChange, type CheckoutCreate } from './checkout-input.js';
import { hashCheckoutToken, isCheckoutTokenShape, newCheckoutToken, sameTokenHash } from './checkout-token.js';
import { checkoutView, type CheckoutState, type CheckoutView } from './checkout-view.js';
import { paymentMethodsOf } from './payment-methods.js';
import { quoteShippingRates, type RateSources, type ShippingRate } from './shipping-rates.js';
import { findCheckout, findCheckoutForQuote, findCheckoutInStore, insertCheckout, markCompleted, storeBySlug, updateCheckout, type CheckoutChanges, type CatalogLine, type CheckoutQuoteData, type CheckoutRow, type CheckoutStore } from './checkouts.repo.js';

/** C15.1: a checkout can be changed, quoted and completed for 24 hours after its creation. */
export const CHECKOUT_LIFETIME_MS = 24 * 3600_000;

const gone = () => new AppError('gone', 'This checkout has expired');

async function storeOf(deps: Deps, storeURL: string): Promise<CheckoutStore> {
  const store = await storeBySlug(deps.db, storeURL);
  if (!store) throw notFound('Store not found');
  return store;
}

/** The store's checkout with this token, else 404 (an unknown token and another store's look the same). */
async function checkoutOf(q: Queryable, store: CheckoutStore, token: string, opts: { lock?: boolean } = {}): Promise<CheckoutRow> {
  const hash = isCheckoutTokenShape(token) ? hashCheckoutToken(token) : null;
  const row = hash ? await findCheckout(q, store.id, hash, opts) : null;
  if (!row || !sameTokenHash(row.token_hash, hash!)) throw notFound('Checkout not found');
  return row;
}

/**
 * The store and its checkout in one query (the storefront's reads: one round trip, not two); on a
 * miss, which of the two is missing decides the 404's words.
 */
async function storeAndCheckout(deps: Deps, storeURL: string, token: string): Promise<{ store: CheckoutStore; row: CheckoutRow }> {
  const hash = isCheckoutTokenShape(token) ? hashCheckoutToken(token) : null;
  const found = hash ? await findCheckoutInStore(deps.db, storeURL, hash) : null;
  if (found && sameTokenHash(found.row.token_hash, hash!)) return found;
  await storeOf(deps, storeURL);
  throw notFound('Checkout not found');
}

/**
 * `storeAndCheckout` for a quote: with the lines' catalog facts, the zones and the shipping apps
 * read in the same query, so quoting the rates of a checkout without apps is one round trip.
 */
async function checkoutForQuote(deps: Deps, storeURL: string, token: string): Promise<CheckoutQuoteData> {
  const hash = isCheckoutTokenShape(token) ? hashCheckoutToken(token) : null;
  const found = hash ? await findCheckoutForQuote(deps.db, storeURL, hash) : null;
  if (found && sameTokenHash(found.row.token_hash, hash!)) return found;
  await storeOf(deps, storeURL);
  throw notFound('Checkout not found');
}

/** Changing, quoting or completing: not once completed (409), not once expired (410). */
function assertOpen(row: CheckoutRow, now: Date): void {
  if (row.completed_at) throw conflict('This checkout is already completed');
  if (row.expires_at.getTime() <= now.getTime()) throw gone();
}

/**
 * The checkout priced now: lines from the catalog, the discount as at checkout, the chosen rate.
 * `catalog`: the lines' catalog facts when already read (`findCheckoutForQuote`).
 */
async function stateOf(deps: Deps, q: Queryable, row: CheckoutRow, catalog?: (CatalogLine | null)[]): Promise<CheckoutState> {
  const { lines, problems } = catalog ? priceFoundLines(row.line_items, catalog) : await priceLines(q, row.store_id, row.line_items);
  const shippingMinor = row.shipping_rate ? minorOf(row.shipping_rate.price) : 0;
  const step = hundredthsStep(row.currency);
  const priceLinesOf = lines.map((l) => ({ productId: l.productId, unitMinor: l.unitMinor, quantity: l.quantity, taxable: true }));
  let discount: CheckoutState['discount'] = null;
  let applied = null;
  if (row.discount_code) {
    const itemsMinor = lines.reduce((s, l) => s + l.unitMinor * l.quantity, 0);
    const customerId = row.email ? await findCustomerIdByEmail(q, row.store_id, row.email) : null;
    try {
      applied = await checkDiscountCode(q, row.store_id, row.discount_code, { itemsMinor, lines, customerId, email: row.email, now: deps.clock.now() });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      problems.push({ message: `The discount code ${err.message.replace(/^discount_code /, '')}`, target: 'discount_code' });
    }
  }
  const totals = computeTotals(priceLinesOf, shippingMinor, applied, null, step);
  if (applied) {
    discount = {
      type: 'discount_code',
      code: applied.code,
      title: applied.code,
      value: applied.type === 'Percentage' ? (applied.percentBp! / 100).toFixed(2) : applied.type === 'Flat' ? moneyText(applied.amountMinor ?? 0) : '100.00',
      value_type: applied.type === 'Percentage' ? 'percentage' : applied.type === 'Flat' ? 'fixed_amount' : 'shipping',
      amount: moneyText(totals.totalDiscountMinor),
    };
  }
  return { row, lines, problems, totals, discount, paymentMethods: paymentMethodsOf(), requiresShipping: lines.some((l) => l.requiresShipping) };
}

const minorOf = (price: string) => Math.round(Number(price) * 100);
const moneyText = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

/**
 * The shipping rates offered for the checkout now (C15.2, C15.3); none when nothing ships or there
 * is no address. `sources`: the zones and apps when already read (`findCheckoutForQuote`).
 */
async function ratesOf(deps: Deps, state: CheckoutState, sources?: RateSources): Promise<ShippingRate[]> {
  const destination = state.row.shipping_address;
  if (!state.requiresShipping || !destination) return [];
  return quoteShippingRates(deps, { storeId: state.row.store_id, currency: state.row.currency, destination, lines: state.lines, subtotalMinor: state.totals.subtotalMinor, sources });
}

/** The discount code as the buyer sends it: checked as at checkout (400 when it cannot apply), not yet counted. */
async function assertDiscountApplies(deps: Deps, q: Queryable, row: CheckoutRow): Promise<void> {
  if (!row.discount_code) return;
  const { lines } = await priceLines(q, row.store_id, row.line_items);
  const itemsMinor = lines.reduce((s, l) => s + l.unitMinor * l.quantity, 0);
  const customerId = row.email ? await findCustomerIdByEmail(q, row.store_id, row.email) : null;
  await checkDiscountCode(q, row.store_id, row.discount_code, { itemsMinor, lines, customerId, email: row.email, now: deps.clock.now() });
}

export async function createCheckout(deps: Deps, storeURL: string, body: CheckoutCreate): Promise<CheckoutView> {
  const store = await storeOf(deps, storeURL);
  const asked = readLines(body.line_items);
  const address = body.shipping_address ? readAddress(body.shipping_address) : null;
  const email = readEmail(body.email);
  const now = deps.clock.now();
  const { token, hash } = newCheckoutToken();
  const row: CheckoutRow = {
    id: uuidv7(now.getTime()),
    store_id: store.id,
    token_hash: hash,
    email,
    currency: store.currency,
    line_items: await checkAskedLines(deps.db, store.id, asked),
    shipping_address: address,
    shipping_rate: null,
    discount_code: body.discount_code?.trim() || null,
    note: body.note ?? null,
    payment_method: null,
    order_id: null,
    completed_at: null,
    expires_at: new Date(now.getTime() + CHECKOUT_LIFETIME_MS),
    created_at: now,
    updated_at: now,
  };
  await assertDiscountApplies(deps, deps.db, row);
  await insertCheckout(deps.db, row);
  return checkoutView(token, await stateOf(deps, deps.db, row));
}

export async function getCheckout(deps: Deps, storeURL: string, token: string): Promise<CheckoutView> {
  const { row } = await storeAndCheckout(deps, storeURL, token);
  return checkoutView(token, await stateOf(deps, deps.db, row));
}

export async function changeCheckout(deps: Deps, storeURL: string, token: string, body: CheckoutChange): Promise<CheckoutView> {
  const { store, row: current } = await storeAndCheckout(deps, storeURL, token);
  const now = deps.clock.now();
  assertOpen(current, now);
  const changes: CheckoutChanges = {};
  if (body.email !== undefined) changes.email = readEmail(body.email);
  if (body.note !== undefined) changes.note = body.note;
  if (body.discount_code !== undefined) changes.discount_code = body.discount_code?.trim() || null;
  if (body.line_items !== undefined) changes.line_items = await checkAskedLines(deps.db, store.id, readLines(body.line_items));
  if (body.shipping_address !== undefined) changes.shipping_address = body.shipping_address === null ? null : readAddress(body.shipping_address);
  // New lines or a new address change the rates on offer: the buyer chooses again (docs/decisions.md).
  if (changes.line_items !== undefined || changes.shipping_address !== undefined) changes.shipping_rate = null;
  let next: CheckoutRow = { ...current, ...changes };
  if (changes.discount_code !== undefined) await assertDiscountApplies(deps, deps.db, next);
  if (body.shipping_rate !== undefined) {
    if (body.shipping_rate === null) changes.shipping_rate = null;
    else {
      const rates = await ratesOf(deps, await stateOf(deps, deps.db, next));
      const chosen = rates.find((r) => r.handle === body.shipping_rate!.handle);
      if (!chosen) throw unprocessable('shipping_rate is not one of the rates offered for this checkout', { shipping_rate: ['is not offered'] });
      changes.shipping_rate = chosen;
    }
  }
  if (body.payment_method !== undefined) {
    if (body.payment_method !== null && !paymentMethodsOf().some((m) => m.handle === body.payment_method)) {
      throw unprocessable('payment_method is not one of the payment methods offered for this checkout', { payment_method: ['is not offered'] });
    }
    changes.payment_method = body.payment_method;
  }
  next = await deps.db.transaction(async (tx) => {
    // Completed or expired meanwhile? The lock makes the answer final for this change.
    const locked = await checkoutOf(tx, store, token, { lock: true });
    assertOpen(locked, deps.clock.now());
    return updateCheckout(tx, locked.id, changes, deps.clock.now());
  });
  return checkoutView(token, await stateOf(deps, deps.db, next));
}

export async function checkoutShippingRates(deps: Deps, storeURL: string, token: string): Promise<ShippingRate[]> {
  const { row, catalog, zones, shipping } = await checkoutForQuote(deps, storeURL, token);
  assertOpen(row, deps.clock.now());
  return ratesOf(deps, await stateOf(deps, deps.db, row, catalog), { zones, shipping });
}

/** What completion still needs, in the buyer's words (422 when anything is missing). */
function missingForCompletion(state: CheckoutState, rates: ShippingRate[]): string[] {
  const { row } = state;
  const missing: string[] = [];
  if (!state.lines.length) missing.push('line items');
  if (!row.email) missing.push('an email');
  if (state.requiresShipping) {
    if (!row.shipping_address) missing.push('a shipping address');
    if (!row.shipping_rate) missing.push('a shipping rate');
    else if (!rates.some((r) => r.handle === row.shipping_rate!.handle)) missing.push('a shipping rate that is still offered');
  }
  if (!row.payment_method) missing.push('a payment method');
  else if (!state.paymentMethods.some((m) => m.handle === row.payment_method)) missing.push('a payment method that is still offered');
  return missing;
}

/** The order `POST /orders` would take for this checkout (C15.1). */
function orderInputOf(state: CheckoutState, rate: ShippingRate | null): NewOrderInput {
  const { row } = state;
  const lines: LineInput[] = row.line_items.map((l, i) => ({
    label: `line_items[${i}]`, productRef: l.product_id, variantRef: l.variant_id, quantity: l.quantity, properties: [], title: null, priceMinor: null,
  }));
  const address = row.shipping_address ?? {};
  return {
    customer: null,
    email: row.email,
    phone: address.phone ?? null,
    lines,
    shippingAddress: address,
    billingAddress: null,
    shippingLine: rate ? { title: rate.title, code: rate.code, source: rate.source, price: rate.price } : null,
    shippingMinor: rate ? minorOf(rate.price) : 0,
    discountCode: row.discount_code,
    taxRatePpm: null,
    paymentMethod: row.payment_method as PaymentMethod,
    note: row.note,
    tags: [],
    currency: row.currency,
    attributes: [],
  };
}

export async function completeCheckout(deps: Deps, storeURL: string, token: string) {
  const { store, row, catalog, zones, shipping } = await checkoutForQuote(deps, storeURL, token);
  assertOpen(row, deps.clock.now());
  const state = await stateOf(deps, deps.db, row, catalog);
  // Rates are asked outside the transaction: an app's answer can take seconds, a lock must not.
  const rates = state.requiresShipping ? await ratesOf(deps, state, { zones, shipping }) : [];
  const missing = missingForCompletion(state, rates);
  if (missing.length) throw unprocessable(`The checkout needs ${missing.join(', ')} before it can be completed`);
  if (state.problems.length) throw unprocessable(state.problems.map((p: ValidationProblem) => p.message).join('; '));
  const rate = state.requiresShipping ? rates.find((r) => r.handle === row.shipping_rate!.handle)! : null;
  const input = orderInputOf(state, rate);
  const order = await retryingNewCustomer(() =>
    deps.db.transaction(async (tx) => {
      const locked = await checkoutOf(tx, store, token, { lock: true });
      assertOpen(locked, deps.clock.now());
      const placed = await placeOrderInTx(deps, tx, store.id, input);
      await markCompleted(tx, locked.id, placed.id, deps.clock.now());
      return placed;
    }),
  );
  return orderView(order, deps.config.baseUrl);
}
