// Two schema parts the order-area bodies need beyond src/http/schemas.ts (issue 11 section 1);
// candidates for src/http/schemas.ts if other areas want them.
import { Type, type Static, type TObject, type TSchema } from 'typebox';

/**
 * `required: [field]` with the reader's own words for a missing field, where they are not the
 * house's "can't be blank" (`line_items` "must be a non-empty array"). Goes in the body's `allOf`
 * (its `x-error` then speaks for this `required` only); declare the property itself as
 * `Type.Optional` so that the body's own `required` does not report it a second time.
 */
export function requiredAs(field: string, words: string): TSchema {
  return Type.Unsafe({ required: [field], 'x-error': { required: words } });
}

/**
 * A body that may be left out (no body at all reads as `{}`): the object's properties and
 * constraints, without `type`, which would refuse the absent body. Anything else than an object
 * (a JSON string, an array) passes here and is refused by the reader, in its words.
 */
export function optionalBody<T extends TObject>(schema: T, description: string) {
  const { type: _type, ...rest } = schema as unknown as Record<string, unknown>;
  return Type.Unsafe<Static<T> | undefined>({ ...rest, description });
}

/** A text field as the order readers read it: a string, or a number taken as its digits; null is absent. */
export const textish = (description: string, options: Record<string, unknown> = {}) =>
  Type.Unsafe<string | number | null>({ type: ['string', 'number', 'null'], description, 'x-error': { type: 'must be a string' }, ...options });
