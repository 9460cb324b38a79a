// The GDPR area's factory.

/**
 * An app body with its own gdprUrls under `<receiverUrl>/<tag>/...`; GDPR topics need
 * read_customers (C14.10). Enterprise tier: no test meets the rate limit.
 */
export function gdprAppBody(receiverUrl: string, tag: string, extra: Record<string, unknown> = {}) {
  return {
    scopes: ['read_shop', 'read_customers', 'read_orders'], tier: 'enterprise',
    gdprUrls: { customerDataRequest: `${receiverUrl}/${tag}/data`, customerRedact: `${receiverUrl}/${tag}/redact`, shopRedact: `${receiverUrl}/${tag}/shop` },
    ...extra,
  };
}
