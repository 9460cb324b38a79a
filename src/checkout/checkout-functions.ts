// The store's functions at a checkout (C11.3, C11.4): which run when, with what input, and what
// their outputs make of the checkout. The active functions of a target run together (each sees
// the same input) in the service's worker pool, as one task; their operations are applied in activation order
// (src/functions/operations.ts). A failed run's operations are dropped and the checkout goes on.
// Every run is recorded (C11.5) behind the answer, in batches (src/functions/run-recorder.ts), so
// recording never slows the checkout.
import type { Deps } from '../deps.js';
import { uuidv7 } from '../ids.js';
import type { SecretBox } from '../crypto.js';
import { Lru } from '../functions/runtime/lru.js';
import type { StoreFunctionRow } from '../functions/functions.repo.js';
import type { NewRun } from '../functions/function-runs.repo.js';
import { JsonText } from '../db/sql.js';
import { storedInputText } from '../functions/function-view.js';
import { applyTransforms, collectValidationErrors, type FunctionOutput, type ValidationError } from '../functions/operations.js';
import type { FunctionTarget } from '../functions/runtime/index.js';
import type { CheckoutView } from './checkout-view.js';
import type { PaymentMethodOffer } from './payment-methods.js';
import type { ShippingRate } from './rate.js';

export const DELIVERY_TARGET = 'cart.delivery-options.transform.run';
export const PAYMENT_TARGET = 'cart.payment-methods.transform.run';
export const VALIDATION_TARGET = 'cart.validations.generate.run';
export const DISCOUNT_TARGET = 'cart.lines.discounts.generate.run';

/** What a checkout's last runs of its cart functions gave (stored on the checkout: a GET shows it, C11.4). */
export interface FunctionResults {
  /** The payment methods after the payment-method functions. */
  paymentMethods: PaymentMethodOffer[];
  validationErrors: ValidationError[];
  /** The discount functions' outputs, in activation order: amounts are computed on the current prices. */
  discountOutputs: FunctionOutput[];
}

/** The checkout the functions are run for. */
export interface FunctionCheckout {
  storeId: string;
  /** `input.shop` (C11.3). */
  shop: { id: string; domain: string; currency: string };
  checkoutId: string;
  token: string;
}

/** The store's active functions by target, in activation order. */
export type ActiveFunctions = ReadonlyMap<string, readonly StoreFunctionRow[]>;

export function byTarget(rows: readonly StoreFunctionRow[]): ActiveFunctions {
  const map = new Map<string, StoreFunctionRow[]>();
  for (const row of rows) {
    const list = map.get(row.target);
    if (list) list.push(row);
    else map.set(row.target, [row]);
  }
  return map;
}

/**
 * The checkout's token sealed for its run records, once per checkout in this process: a checkout's
 * token never changes, any sealing of it opens to it, and sealing (AES-GCM set-up) was a few per
 * cent of a quote with functions. Kept by checkout id, per key (a SecretBox), ciphertext only.
 */
const sealedTokens = new WeakMap<SecretBox, Lru<string, string>>();
const SEALED_TOKENS_KEPT = 10_000;

function sealedTokenOf(deps: Deps, call: FunctionCheckout): string {
  let kept = sealedTokens.get(deps.secrets);
  if (!kept) sealedTokens.set(deps.secrets, (kept = new Lru(SEALED_TOKENS_KEPT)));
  let sealed = kept.get(call.checkoutId);
  if (sealed === undefined) {
    sealed = deps.secrets.seal(call.token);
    kept.set(call.checkoutId, sealed);
  }
  return sealed;
}

/**
 * Runs the target's active functions on `input` and answers the successful outputs in activation
 * order; the runs are recorded after. No active function: no run, no output.
 */
async function runTarget(deps: Deps, call: FunctionCheckout, target: FunctionTarget, functions: readonly StoreFunctionRow[], input: Record<string, unknown>): Promise<FunctionOutput[]> {
  if (!functions.length) return [];
  const now = deps.clock.now();
  // Serialised once for all the target's functions; their records' text (without the token) is cut from it.
  const inputJson = JSON.stringify(input);
  const results = await deps.functions.runAll(functions.map((f) => ({ target, expression: f.expression, input, inputJson, configuration: f.configuration })));
  const stored = new JsonText(storedInputText(input, inputJson));
  const sealedToken = sealedTokenOf(deps, call);
  deps.runRecorder.add(functions.map((f, i): NewRun => ({
    id: uuidv7(now.getTime()),
    appId: f.app_id,
    storeId: call.storeId,
    functionId: f.id,
    functionHandle: f.handle,
    target,
    status: results[i].status,
    errorType: results[i].errorType,
    errorMessage: results[i].errorMessage,
    input: stored,
    inputBytes: results[i].inputBytes,
    output: results[i].output,
    outputBytes: results[i].outputBytes,
    durationMs: results[i].durationMs,
    checkoutId: call.checkoutId,
    checkoutTokenSealed: sealedToken,
    createdAt: now,
  })));
  return results.flatMap((r) => (r.status === 'success' ? [r.output as FunctionOutput] : []));
}

/**
 * The payment-method, validation and discount functions (C11.4: when a checkout is created or
 * changed, and at completion), all at once, on the checkout as it stands before them.
 */
export async function runCartFunctions(
  deps: Deps,
  call: FunctionCheckout,
  active: ActiveFunctions,
  checkout: CheckoutView,
  storeMethods: readonly PaymentMethodOffer[],
): Promise<FunctionResults | null> {
  const payment = active.get(PAYMENT_TARGET) ?? [];
  const validation = active.get(VALIDATION_TARGET) ?? [];
  const discount = active.get(DISCOUNT_TARGET) ?? [];
  if (!payment.length && !validation.length && !discount.length) return null;
  const input = { checkout, shop: call.shop };
  const [paymentOutputs, validationOutputs, discountOutputs] = await Promise.all([
    runTarget(deps, call, PAYMENT_TARGET, payment, { ...input, paymentMethods: storeMethods }),
    runTarget(deps, call, VALIDATION_TARGET, validation, input),
    runTarget(deps, call, DISCOUNT_TARGET, discount, input),
  ]);
  return {
    paymentMethods: applyTransforms(storeMethods, paymentOutputs),
    validationErrors: collectValidationErrors(validationOutputs, checkout.line_items.map((l) => l.id)),
    discountOutputs,
  };
}

/**
 * The delivery-option functions (C11.4: whenever the rates are computed): the rates the checkout
 * offers. `checkout` is asked for only when a function runs (building the view costs a quote).
 * Computed and none found (no zone or app has a rate for the address), they run all the same, on
 * an empty `deliveryOptions`: C11.4 runs them whenever the rates are computed, and C11.5 records
 * every run (a developer's log showed no run for such quotes).
 */
export async function shapeRates(deps: Deps, call: FunctionCheckout, active: ActiveFunctions, checkout: () => CheckoutView, rates: ShippingRate[]): Promise<ShippingRate[]> {
  const delivery = active.get(DELIVERY_TARGET) ?? [];
  if (!delivery.length) return rates;
  const deliveryOptions = rates.map((r) => ({ handle: r.handle, title: r.title, price: r.price, code: r.code, source: r.source }));
  const outputs = await runTarget(deps, call, DELIVERY_TARGET, delivery, { checkout: checkout(), shop: call.shop, deliveryOptions });
  return applyTransforms(rates, outputs);
}
