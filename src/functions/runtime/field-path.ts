// One way to name a field in a JSON value: object keys joined with dots and array positions in
// brackets, `line_items[0].quantity`. Here, in the function runtime (which imports nothing from the
// rest of the service), because the runtime names the places in a function's output with it;
// src/http/field-path.ts gives it to the service's error bodies, so both read the same.

/** `parent` one step further in: a key (`parent.key`) or an array position (`parent[0]`). */
export function childPath(parent: string, step: string | number): string {
  if (typeof step === 'number') return `${parent}[${step}]`;
  return parent ? `${parent}.${step}` : step;
}
