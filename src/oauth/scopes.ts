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
