// An order's `metafields` field (app-api.md Order): the order's metafields grouped by namespace,
// and whom they are shown to. Built by order-view.ts from the rows the order read carries.
import { typedValue } from '../metafields/types.js';
import { hasScope } from '../oauth/scopes.js';

/**
 * Whom the order's `metafields` are shown to. They are data of the Scopes table's `read_metafields`
 * (app-api.md Rules 2: a token without it gets 403 from the metafields endpoint), so the order
 * carries them only for an App API caller holding that scope; for everyone else the field is there,
 * empty. Webhook bodies never carry them: one body goes to apps of every scope (C8.2), and apps of
 * `write_metafields` could otherwise grow every order event past what receivers take (found in
 * review: 24 values of 60,000 characters made a 1.4 MB `orders/updated` that the SDK refused with a
 * 413, a permanent failure). An app that needs them reads the order or the metafields endpoint.
 */
export type MetafieldsShown = 'shown' | 'withheld';

export const metafieldsFor = (scopes: readonly string[]): MetafieldsShown => (hasScope(scopes, 'read_metafields') ? 'shown' : 'withheld');

/**
 * The order's metafields grouped by namespace. Namespaces and keys are a client's strings, so the
 * groups are built as Maps: `(out[namespace] ??= {})[key] = value` with a namespace `__proto__`
 * wrote the value onto Object.prototype, for every object of the process (found in review: it
 * took the process down, and again on every read of the order after a restart).
 */
export function metafieldsView(rows: [string, string, string, string][] | undefined) {
  const groups = new Map<string, Map<string, unknown>>();
  for (const [namespace, key, type, raw] of rows ?? []) {
    let value: unknown = raw;
    try {
      value = typedValue(type, raw);
    } catch {
      // a raw value that no longer parses is shown as stored
    }
    const group = groups.get(namespace) ?? new Map<string, unknown>();
    groups.set(namespace, group.set(key, value));
  }
  // Object.fromEntries defines own properties: a `__proto__` entry is a plain key, never a prototype.
  return Object.fromEntries([...groups].map(([namespace, group]) => [namespace, Object.fromEntries(group)])) as Record<string, Record<string, unknown>>;
}
