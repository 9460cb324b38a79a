// Checkouts (C15.1): create, read, change, shipping rates, complete. A checkout is found by its
// store and token only; it expires 24 hours after creation (service clock): an expired checkout
// can still be read, but no longer changed, quoted or completed (410). Completion takes the order
// exactly as `POST /orders` does (src/orders/order-create.ts: stock, customer, discount code,
// orders/create), under a lock on the checkout row, so two completions at once make one order.
// The store's functions (C11) shape it at the points C11.4 names: payment-method, validation and
// discount functions when it is created, changed and completed; delivery-option functions whenever
// its rates are computed (src/checkout/checkout-functions.ts, run on a checkout by
// checkout-runs.ts). What the order of a checkout is made of, and whether the order placed
// matches it, is src/checkout/checkout-order.ts.
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { AppError, conflict, notFound, unprocessable } from '../http/errors.js';
import { uuidv7 } from '../ids.js';
import { isDeepStrictEqual } from 'node:util';
import { findCustomerIdByEmail } from '../customers/customers.repo.js';
import { activeStoreFunctions } from '../functions/functions.repo.js';
import { checkDiscountCode, ORDER_TRANSACTION, placeOrderInTx, retryingNewCustomer } from '../orders/order-create.js';
import { orderView } from '../orders/order-view.js';
import { checkAskedLines, priceLines, type ValidationProblem } from './checkout-lines.js';
import { readAddress, readEmail, readLines, type CheckoutChange, type CheckoutCreate } from './checkout-input.js';
import { hashCheckoutToken, isCheckoutTokenShape, newCheckoutToken, sameTokenHash } from './checkout-token.js';
import { checkoutView, type CheckoutView } from './checkout-view.js';
import { byTarget, type FunctionResults } from './checkout-functions.js';
import { functionCall, ratesOf, withCartFunctions } from './checkout-runs.js';
import type { ShippingRate } from './shipping-rates.js';
import { rateBodySha256Of } from './rate-request.js';
import { assertLinesFitAnOrder, finishState, pricedCheckout, stateOf } from './checkout-state.js';
import { chargeChangeOf, isChosenRate, missingForCompletion, orderInputOf, orderIsAsPriced, rateChangesOf, refusedAsPricedNow, sameCharge, type RateChange } from './checkout-order.js';
import { zonesForCountry } from './store-config-cache.js';
import { findCheckout, findCheckoutForQuote, findCheckoutInStore, insertCheckout, markCompleted, productsAllActive, saveChosenRate, saveFunctionResults, storeBySlug, updateCheckout, type AskedLine, type CheckoutChanges, type CheckoutQuoteData, type CheckoutRow, type CheckoutStore } from './checkouts.repo.js';
import { storeConfigAt } from './store-config.repo.js';

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
async function storeAndCheckout(deps: Deps, storeURL: string, token: string): Promise<{ store: CheckoutStore; row: CheckoutRow; configVersion: string }> {
  const hash = isCheckoutTokenShape(token) ? hashCheckoutToken(token) : null;
  const found = hash ? await findCheckoutInStore(deps.db, storeURL, hash) : null;
  if (found && sameTokenHash(found.row.token_hash, hash!)) return found;
  await storeOf(deps, storeURL);
  throw notFound('Checkout not found');
}

/**
 * `storeAndCheckout` for a quote: with the lines' catalog facts, the zones and the shipping apps
 * read in the same query, so quoting the rates of a checkout without apps is one round trip; and
 * the shared rate cache's answers to the body the checkout's last change foresaw, so a first quote
 * with apps is one round trip too (app-rates.ts). Those answers are not read when this process will
 * not need them: when its copy of the store's set has no shipping app, or it remembers this
 * checkout's last quote of the apps (a buyer quoting again). Both are hints: were they wrong, the
 * quote looks the answers up itself.
 */
async function checkoutForQuote(deps: Deps, storeURL: string, token: string): Promise<CheckoutQuoteData> {
  const hash = isCheckoutTokenShape(token) ? hashCheckoutToken(token) : null;
  const held = deps.storeConfigs.get(storeURL.toLowerCase());
  const withCachedAnswers = hash !== null && held?.apps.length !== 0 && deps.rateMemo.lastQuote(hash) === undefined;
  const found = hash ? await findCheckoutForQuote(deps.db, storeURL, hash, deps.storeConfigs, withCachedAnswers) : null;
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
 * The discount code as the buyer sends it: checked as at checkout (400 when it cannot apply), not
 * yet counted. A code limited per customer is taken before the buyer gives an email (storefronts
 * ask for the two in either order); until then the checkout shows it as a validation error.
 */
async function assertDiscountApplies(deps: Deps, q: Queryable, row: CheckoutRow): Promise<void> {
  if (!row.discount_code) return;
  // Every line the catalog can sell, whatever the currency can hold: a line priced as it cannot is
  // the line's validation error (priceCheckoutLines), not the code's refusal.
  const { lines } = await priceLines(q, row.store_id, row.line_items);
  const itemsMinor = lines.reduce((s, l) => s + l.unitMinor * l.quantity, 0);
  const customerId = row.email ? await findCustomerIdByEmail(q, row.store_id, row.email) : null;
  await checkDiscountCode(q, row.store_id, row.discount_code, { itemsMinor, lines, customerId, email: row.email, now: deps.clock.now() }, { checkout: 'sent' });
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
    function_results: null,
    rate_body_sha256: null,
    completed_pricing: null,
  };
  await assertDiscountApplies(deps, deps.db, row);
  const active = byTarget(await activeStoreFunctions(deps.db, store.id));
  const priced = await pricedCheckout(deps, deps.db, row);
  assertLinesFitAnOrder(priced);
  const { results, state } = await withCartFunctions(deps, functionCall(store, row, token), active, priced);
  row.function_results = results;
  row.rate_body_sha256 = rateBodySha256Of(store.origin, row.shipping_address, priced.lines, row.currency);
  await insertCheckout(deps.db, row);
  return checkoutView(token, state);
}

export async function getCheckout(deps: Deps, storeURL: string, token: string): Promise<CheckoutView> {
  const { row } = await storeAndCheckout(deps, storeURL, token);
  return checkoutView(token, await stateOf(deps, deps.db, row));
}

/** The same products, variants and quantities in the same order (the lines' own ids aside). */
const sameAskedLines = (a: readonly AskedLine[], b: readonly AskedLine[]) =>
  a.length === b.length && a.every((l, i) => l.product_id === b[i].product_id && l.variant_id === b[i].variant_id && l.quantity === b[i].quantity);

export async function changeCheckout(deps: Deps, storeURL: string, token: string, body: CheckoutChange, attempt = 1): Promise<CheckoutView> {
  const { store, row: current, configVersion } = await storeAndCheckout(deps, storeURL, token);
  const now = deps.clock.now();
  assertOpen(current, now);
  const changes: CheckoutChanges = {};
  if (body.email !== undefined) changes.email = readEmail(body.email);
  if (body.note !== undefined) changes.note = body.note;
  if (body.discount_code !== undefined) changes.discount_code = body.discount_code?.trim() || null;
  if (body.line_items !== undefined) changes.line_items = await checkAskedLines(deps.db, store.id, readLines(body.line_items));
  if (body.shipping_address !== undefined) changes.shipping_address = body.shipping_address === null ? null : readAddress(body.shipping_address);
  // New lines or a new address change the rates on offer: the buyer chooses again (docs/decisions.md).
  // The same ones sent again (a storefront sending its whole form) change nothing the rates depend on.
  const newLines = changes.line_items !== undefined && !sameAskedLines(changes.line_items, current.line_items);
  const newAddress = changes.shipping_address !== undefined && !isDeepStrictEqual(changes.shipping_address, current.shipping_address);
  if (newLines || newAddress) changes.shipping_rate = null;
  if (body.shipping_rate === null) changes.shipping_rate = null;
  // The payment method asked for is part of the checkout the functions see (C11.3: `input.checkout`
  // is the checkout as C15.1 shows it, so as changed); whether it is offered is known after them.
  if (body.payment_method !== undefined) changes.payment_method = body.payment_method;
  let next: CheckoutRow = { ...current, ...changes };
  if (changes.discount_code !== undefined) await assertDiscountApplies(deps, deps.db, next);
  // C11.4: the cart functions run on the changed checkout; what they give is the checkout's now.
  const call = functionCall(store, next, token);
  // The store's zones, shipping apps and functions as a quote reads them: this process's copy when
  // it is of the version read with the checkout (store-config-cache.ts), so choosing a rate after
  // listing them reads nothing of the store again.
  const config = await storeConfigAt(deps.db, deps.storeConfigs, store.slug, store.id, configVersion);
  const active = byTarget(config.functions);
  const priced = await pricedCheckout(deps, deps.db, next);
  if (newLines) assertLinesFitAnOrder(priced);
  let { results, state } = await withCartFunctions(deps, call, active, priced);
  if (body.shipping_rate) {
    const sources = { zones: zonesForCountry(config.zones, next.shipping_address?.country_code), shipping: { apps: [...config.apps], origin: config.origin } };
    const rates = await ratesOf(deps, call, active, state, sources);
    const chosen = rates.find((r) => r.handle === body.shipping_rate!.handle);
    if (!chosen) throw unprocessable('shipping_rate is not one of the rates offered for this checkout', { shipping_rate: ['is not offered'] });
    changes.shipping_rate = chosen;
    // The rates are of the checkout as the functions left it, so the chosen one is known only now;
    // the functions run again with it in `input.checkout.shipping_line`, and that run is the
    // checkout's (what completion checks again, with every target, C11.4).
    next = { ...next, shipping_rate: chosen };
    ({ results, state } = await withCartFunctions(deps, call, active, { ...priced, row: next }));
  }
  changes.function_results = results;
  // Of the checkout as changed, and of the store's address and catalog now, whatever the change was.
  changes.rate_body_sha256 = rateBodySha256Of(store.origin, next.shipping_address, priced.lines, next.currency);
  if (body.payment_method != null && !state.paymentMethods.some((m) => m.handle === body.payment_method)) {
    throw unprocessable('payment_method is not one of the payment methods offered for this checkout', { payment_method: ['is not offered'] });
  }
  try {
    next = await deps.db.transaction(async (tx) => {
      // Completed or expired meanwhile? The lock makes the answer final for this change.
      const locked = await checkoutOf(tx, store, token, { lock: true });
      assertOpen(locked, deps.clock.now());
      // What was worked out here (the rate chosen, cleared or kept, the functions' results) is of
      // the checkout as read before the apps and functions were asked. Another change that landed
      // meanwhile (a new address while this one chose a rate) would be half overwritten, leaving a
      // rate chosen for an address the checkout no longer has: start over from the checkout as it
      // now stands, as completion does.
      if (!sameBuyerChoices(locked, current)) throw new ChangedMeanwhile();
      return updateCheckout(tx, locked.id, changes, deps.clock.now());
    });
  } catch (err) {
    if (!(err instanceof ChangedMeanwhile)) throw err;
    if (attempt >= COMPLETION_ATTEMPTS) throw conflict('The checkout changed while this change was being made; send it again');
    return changeCheckout(deps, storeURL, token, body, attempt + 1);
  }
  return checkoutView(token, finishState({ ...priced, row: next }, results));
}

export async function checkoutShippingRates(deps: Deps, storeURL: string, token: string): Promise<ShippingRate[]> {
  const { store, row, catalog, zones, shipping, functions, cached } = await checkoutForQuote(deps, storeURL, token);
  assertOpen(row, deps.clock.now());
  return ratesOf(deps, functionCall(store, row, token), byTarget(functions), await stateOf(deps, deps.db, row, catalog), { zones, shipping, cached });
}

/** What a change can set (C15.1), all an order is built from: equal, and the order is the same. */
const BUYER_CHOICES = ['email', 'line_items', 'shipping_address', 'shipping_rate', 'discount_code', 'note', 'payment_method'] as const;
const sameBuyerChoices = (a: CheckoutRow, b: CheckoutRow) => BUYER_CHOICES.every((k) => isDeepStrictEqual(a[k], b[k]));

/**
 * C11.4: "a GET of the checkout shows the result of the last runs". Completion runs the cart
 * functions again, and their results may differ from the last change's (the merchant changed a
 * function's configuration, or a price moved): they are stored when they differ, so the checkout
 * shows the validation errors, payment methods or total that refuse its completion. Only if the
 * checkout is still as read (a change meanwhile stored the results of its own runs, which are
 * later). Whether they are now the checkout's: when not, completion will start over (the lock's check).
 */
async function keepLatestResults(deps: Deps, store: CheckoutStore, token: string, row: CheckoutRow, results: FunctionResults | null): Promise<void> {
  if (sameResults(results, row.function_results)) return;
  await deps.db.transaction(async (tx) => {
    const locked = await checkoutOf(tx, store, token, { lock: true });
    if (locked.completed_at || !sameBuyerChoices(locked, row) || !sameResults(locked.function_results, row.function_results)) return;
    await saveFunctionResults(tx, locked.id, results);
  });
}

/**
 * Two runs' results compared as stored (jsonb): a property left undefined in memory is absent once
 * read back, and must not make results just saved look like another run's.
 */
const asStored = (r: FunctionResults | null): unknown => (r === null ? null : JSON.parse(JSON.stringify(r)));
const sameResults = (a: FunctionResults | null, b: FunctionResults | null) => isDeepStrictEqual(asStored(a), asStored(b));

/**
 * The chosen rate is still offered, but otherwise than it was chosen, which the checkout shows (its
 * `shipping_line`, `shipping_price` and `total_price`), in what the order copies of it
 * (`rateChangesOf`: title, code, source, price): a zone's price or name was changed, an app's answer
 * expired and it now quotes another price or names the service otherwise, a delivery function now
 * renames it. Charging the new price would take a total the buyer was never shown, and copying the
 * new title would make an order whose shipping line the checkout never showed (C15.1: the checkout
 * shows what completion makes), so the choice becomes the rate as now offered, and the buyer, shown
 * it, completes again. Only if the checkout is still as read (a change meanwhile made its own choice).
 */
async function retakeChosenRate(deps: Deps, store: CheckoutStore, token: string, row: CheckoutRow, rate: ShippingRate, changes: RateChange[]): Promise<never> {
  await deps.db.transaction(async (tx) => {
    const locked = await checkoutOf(tx, store, token, { lock: true });
    if (locked.completed_at || !sameBuyerChoices(locked, row)) return;
    await saveChosenRate(tx, locked.id, rate);
  });
  const fields = { shipping_rate: changes.map((c) => `changed ${c.field}`) };
  if (changes.length === 1 && changes[0].field === 'price') {
    throw unprocessable(
      `The price of the shipping rate chosen changed from ${changes[0].was} to ${changes[0].now}; the checkout shows it now: complete it again to accept it`,
      fields,
    );
  }
  const said = changes.map((c) => `its ${c.field} from ${c.field === 'price' ? c.was : JSON.stringify(c.was)} to ${c.field === 'price' ? c.now : JSON.stringify(c.now)}`);
  throw unprocessable(`The shipping rate chosen changed: ${said.join(', ')}; the checkout shows it now: complete it again to accept it`, fields);
}

/** Thrown inside a completion's transaction when the checkout changed after it was read (see below). */
class ChangedMeanwhile extends Error {}

/** Times a change or a completion starts over because the checkout kept changing under it, before a 409. */
const COMPLETION_ATTEMPTS = 3;

export async function completeCheckout(deps: Deps, storeURL: string, token: string, attempt = 1): Promise<ReturnType<typeof orderView>> {
  const { store, row, catalog, zones, shipping, functions, cached } = await checkoutForQuote(deps, storeURL, token);
  assertOpen(row, deps.clock.now());
  // C11.4: at completion every target's functions run again; their validation errors block it.
  const call = functionCall(store, row, token);
  const active = byTarget(functions);
  const priced = await pricedCheckout(deps, deps.db, row, catalog);
  const { results, state } = await withCartFunctions(deps, call, active, priced);
  // Kept before anything can refuse the completion, so that a GET shows what refused it (C11.4).
  await keepLatestResults(deps, store, token, row, results);
  // Rates are asked outside the transaction: an app's answer can take seconds, a lock must not.
  const rates = state.requiresShipping ? await ratesOf(deps, call, active, state, { zones, shipping, cached }) : [];
  const missing = missingForCompletion(state, rates);
  if (missing.length) throw unprocessable(`The checkout needs ${missing.join(', ')} before it can be completed`);
  if (state.problems.length) throw unprocessable(state.problems.map((p: ValidationProblem) => p.message).join('; '));
  // The order copies the rate as chosen, which the checkout shows; the rate as offered now must
  // make the same shipping line (docs/decisions.md, Checkouts).
  const chosen = state.requiresShipping ? row.shipping_rate! : null;
  if (chosen) {
    const offered = rates.find((r) => isChosenRate(r, chosen))!;
    const changes = rateChangesOf(chosen, offered);
    if (changes.length) await retakeChosenRate(deps, store, token, row, offered, changes);
  }
  // Nor may the functions' runs of now charge otherwise than those the checkout showed (C11.4: a
  // GET shows the last runs; a discount function deactivated or reconfigured since): their results
  // are stored above, so the checkout shows the new total, and the buyer completes again.
  const shown = finishState(priced, row.function_results);
  if (!sameCharge(shown, state)) {
    const { message, fields } = chargeChangeOf(shown, state);
    throw unprocessable(message, fields);
  }
  const input = orderInputOf(state, chosen);
  let order;
  try {
    order = await retryingNewCustomer(() =>
      deps.db.transaction(async (tx) => {
        const locked = await checkoutOf(tx, store, token, { lock: true });
        assertOpen(locked, deps.clock.now());
        // The order is built from the checkout as read before the lock (its rates and functions
        // are asked outside the transaction). A change that landed since (new lines, address,
        // email, payment method...) would leave an order of a checkout that no longer exists, the
        // checkout showing something else as completed (C15.1: the order is the checkout's): start
        // over from the checkout as it now stands. (By what the buyer chose, not by `updated_at`:
        // two changes within one millisecond, or on a test clock that stands still, share it.)
        // Nor may the functions' results it shows be other than those the order is made with
        // (another completion stored a later run's meanwhile, keepLatestResults).
        if (!sameBuyerChoices(locked, row) || !sameResults(locked.function_results, results)) throw new ChangedMeanwhile();
        const placed = await placeOrderInTx(deps, tx, store.id, input).catch((err: unknown) => {
          throw refusedAsPricedNow(err) ? new ChangedMeanwhile() : err;
        });
        // The order priced its lines and the code again, under its locks; the checkout's record
        // below is what was priced before them. A price, a product or the code changed in between
        // would have the completed checkout show other figures than its order: start over, priced
        // as things now stand (rolled back, so nothing of this order remains). The order takes a
        // product whatever its status (the merchant's rule, C7.1), and the checkout's was read
        // before the wait for the apps and functions: a product archived during that wait was
        // sold. Its row is locked by now (the order took its stock), so its status is final here.
        if (!orderIsAsPriced(placed, state) || !(await productsAllActive(tx, store.id, state.lines.map((l) => l.productId)))) throw new ChangedMeanwhile();
        // What the order was priced at, which the checkout, its record, keeps showing (C15.1).
        await markCompleted(tx, locked.id, placed.id, deps.clock.now(), results, { lines: priced.lines, applied: priced.applied });
        return placed;
      }, ORDER_TRANSACTION),
    );
  } catch (err) {
    if (!(err instanceof ChangedMeanwhile)) throw err;
    if (attempt >= COMPLETION_ATTEMPTS) throw conflict('The checkout changed while it was being completed; complete it again');
    return completeCheckout(deps, storeURL, token, attempt + 1);
  }
  return orderView(order, deps.config.baseUrl, 'withheld');
}
