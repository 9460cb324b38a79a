// The four targets of C11.3 and the shape of each one's output, as JSON Schemas checked by Ajv.
// The schemas are strict (no unknown keys, one operation per entry) so that a typo in a function
// fails as InvalidOutputError where the developer sees it, instead of being silently ignored.
// What the schemas cannot know (whether a handle or line exists) is the checkout's business:
// C11.3 says such an operation is ignored.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { VISIBLE_TEXT_PATTERN } from './visible-text.js';

export const TARGETS = [
  'cart.delivery-options.transform.run',
  'cart.payment-methods.transform.run',
  'cart.validations.generate.run',
  'cart.lines.discounts.generate.run',
] as const;
export type FunctionTarget = (typeof TARGETS)[number];

export function isTarget(value: unknown): value is FunctionTarget {
  return typeof value === 'string' && (TARGETS as readonly string[]).includes(value);
}

const text = { type: 'string', minLength: 1, maxLength: 1000 } as const;
/**
 * Text the buyer reads (a rate's or method's new title, a discount's or validation error's message):
 * not blank by the platform's one rule (src/text.ts `isBlankText`), or a zero-width space became a
 * shipping line's title on the order.
 */
const shownText = { ...text, pattern: VISIBLE_TEXT_PATTERN } as const;
/** Money is a non-negative decimal string ("5", "5.00"), never a number (C11.1). */
const decimalString = { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})(\\.[0-9]{1,6})?$' } as const;

function strictObject(properties: Record<string, object>, required = Object.keys(properties)): object {
  return { type: 'object', required, additionalProperties: false, properties };
}

/** Exactly one of the keys: `{ hide: {...} }`; an unknown key is reported by name. */
function oneKeyOf(properties: Record<string, object>): object {
  return { type: 'object', minProperties: 1, maxProperties: 1, additionalProperties: false, properties };
}

function output(operations: Record<string, object>): object {
  return strictObject({ operations: { type: 'array', items: oneKeyOf(operations) } });
}

/** hide, rename and move: the same three operations over delivery options and payment methods. */
const transformOperations = {
  hide: strictObject({ handle: text }),
  rename: strictObject({ handle: text, title: shownText }),
  // Any whole JSON number: a CEL int, or a double such as 2.0.
  move: strictObject({ handle: text, index: { type: 'integer', minimum: 0 } }),
};

const discountValue = oneKeyOf({
  percentage: { type: 'number', minimum: 0, maximum: 100 },
  fixedAmount: decimalString,
});

export const OUTPUT_SCHEMAS: Record<FunctionTarget, object> = {
  'cart.delivery-options.transform.run': output(transformOperations),
  'cart.payment-methods.transform.run': output(transformOperations),
  'cart.validations.generate.run': output({
    validationAdd: strictObject({
      errors: { type: 'array', items: strictObject({ message: shownText, target: text }) },
    }),
  }),
  'cart.lines.discounts.generate.run': output({
    orderDiscountAdd: strictObject({ message: shownText, value: discountValue }),
    productDiscountAdd: strictObject({
      message: shownText,
      lineIds: { type: 'array', minItems: 1, items: text },
      value: discountValue,
    }),
  }),
};

const ajv = new Ajv({ strict: true, allErrors: false, verbose: true });
const validators = Object.fromEntries(
  TARGETS.map((t) => [t, ajv.compile(OUTPUT_SCHEMAS[t])]),
) as Record<FunctionTarget, ValidateFunction>;

/** Null when `output` has the target's shape, else one sentence saying where it does not. */
export function outputProblem(target: FunctionTarget, output: unknown): string | null {
  const validate = validators[target];
  if (validate(output)) return null;
  return describe(validate.errors ?? []);
}

function describe(errors: ErrorObject[]): string {
  const first = errors[0];
  if (!first) return 'output is not of the target\'s shape';
  const where = 'output' + first.instancePath.split('/').slice(1)
    .map((seg) => (/^[0-9]+$/.test(seg) ? `[${seg}]` : `.${seg}`)).join('');
  switch (first.keyword) {
    case 'additionalProperties':
      return `${where} has an unknown key "${(first.params as { additionalProperty: string }).additionalProperty}" (allowed: ${Object.keys((first.parentSchema as { properties: object }).properties).join(', ')})`;
    case 'minProperties':
    case 'maxProperties':
      return `${where} must have exactly one key (one of: ${Object.keys((first.parentSchema as { properties: object }).properties).join(', ')})`;
    case 'pattern':
      return (first.params as { pattern: string }).pattern === VISIBLE_TEXT_PATTERN
        ? `${where} must not be blank (only spaces or invisible characters)`
        : `${where} must be a decimal string such as "5.00"`;
    default:
      return `${where} ${first.message ?? 'is invalid'}`;
  }
}
