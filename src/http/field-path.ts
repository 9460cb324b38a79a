// One way to name a field in error bodies and messages, whoever finds the problem (a route's
// schema, the input guard, a reader): object keys joined with dots and array positions in
// brackets, `line_items[0].quantity`, as the readers of orders, fulfillments and apps write them.
// (The schema's and the guard's names once had dots for positions, `line_items.0.quantity`, so one
// body could name the same field two ways.)

// The rule itself lives with the function runtime, which names places in a function's output the
// same way (and may import nothing from here).
import { childPath } from '../functions/runtime/field-path.js';

export { childPath };

const POSITION = /^(0|[1-9][0-9]*)$/;

/**
 * A JSON Pointer (Ajv's `instancePath`, `/line_items/0/quantity`) as a field name. A segment of
 * digits is read as an array position: the API's bodies have no object keys made of digits.
 */
export function pointerPath(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const step = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path = childPath(path, POSITION.test(step) ? Number(step) : step);
  }
  return path;
}
