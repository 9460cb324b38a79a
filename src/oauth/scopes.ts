// app-api.md Scopes: every scope an app may ask for.
export const SCOPES = [
  'read_shop', 'write_shop', 'read_products', 'write_products', 'read_collections', 'write_collections',
  'read_inventory', 'write_inventory', 'read_orders', 'write_orders', 'read_fulfillments', 'write_fulfillments',
  'read_customers', 'write_customers', 'read_content', 'write_content', 'read_themes', 'write_themes',
  'read_metafields', 'write_metafields', 'read_files', 'write_files', 'read_discounts', 'write_discounts',
  'read_gift_cards', 'write_gift_cards', 'read_shipping', 'write_shipping', 'read_billing', 'write_billing',
  'read_analytics', 'read_settings', 'write_settings', 'read_marketing', 'write_marketing',
  'read_email_templates', 'write_email_templates',
] as const;
export type Scope = (typeof SCOPES)[number];
const SCOPE_SET = new Set<string>(SCOPES);
export const isScope = (s: unknown): s is Scope => typeof s === 'string' && SCOPE_SET.has(s);

/**
 * Exactly the named scope: app-api.md Rules 2 says a token lacking the scope an endpoint requires
 * gets 403, so `write_x` does not imply `read_x` here (docs/decisions.md).
 */
export function hasScope(granted: readonly string[], required: Scope): boolean {
  return granted.includes(required);
}

/** At most this many refused values are named in a 400 message; the rest are counted. */
export const MAX_ECHOED_VALUES = 5;
/** A refused value is named by at most this many characters (code points). */
export const MAX_ECHOED_CHARS = 64;

/**
 * The refused values a 400 names (`unknown scope: ...`, `not allowed: ...`): the first
 * MAX_ECHOED_VALUES distinct ones, each cut to MAX_ECHOED_CHARS code points (`...` marks a cut),
 * then how many more. A message quotes the caller's input, so it must not grow with it: a megabyte of bogus
 * scopes came back whole (docs/decisions.md "OAuth").
 */
export function describeRefused(values: readonly unknown[]): string {
  const distinct = [...new Set(values.map(String))];
  const named = distinct.slice(0, MAX_ECHOED_VALUES).map((text) => {
    // Code points, so a cut never splits a surrogate pair; slicing first keeps a huge value cheap.
    const points = Array.from(text.slice(0, MAX_ECHOED_CHARS * 2 + 2));
    return points.length > MAX_ECHOED_CHARS ? `${points.slice(0, MAX_ECHOED_CHARS).join('')}...` : text;
  });
  const rest = distinct.length - named.length;
  return rest > 0 ? `${named.join(', ')} and ${rest} more` : named.join(', ');
}
