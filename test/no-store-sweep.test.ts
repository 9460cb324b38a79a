// Answers that carry a credential say `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749
// 5.1; docs/decisions.md "Answers that carry a credential"), swept over every route: any operation
// of the API reference whose success answer has a field holding a credential (a token, a secret, an
// authorization code's handoff URL, a checkout's token) is asked with its surface's credential and
// made-up ids, and its answer, whatever the refusal past authentication (404, 400), must already
// carry both headers (`noStore` marks a route plugin's answers on request, so a refusal carries them
// as a success does). A new route handing out a secret without `noStore` fails here, by its field.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';

/** Response fields that hold a credential. (`key` is a metafield's name, `code` a discount's.) */
const CREDENTIAL_FIELDS = new Set(['token', 'access_token', 'refresh_token', 'redirectUrl', 'sessionToken', 'secret', 'clientSecret', 'checkoutToken']);

interface Schema {
  $ref?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: Schema | boolean;
}
interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
const doc = JSON.parse(readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

/** The credential fields anywhere in a schema (references followed once each). */
function credentialFields(schema: Schema | boolean | undefined, found: Set<string>, seen = new Set<string>()): Set<string> {
  if (!schema || typeof schema !== 'object') return found;
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop()!;
    if (!seen.has(name)) {
      seen.add(name);
      credentialFields(doc.components.schemas[name], found, seen);
    }
    return found;
  }
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (CREDENTIAL_FIELDS.has(name)) found.add(name);
    credentialFields(property, found, seen);
  }
  for (const child of [schema.items, schema.additionalProperties, ...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) credentialFields(child, found, seen);
  return found;
}

const carrying = Object.entries(doc.paths).flatMap(([path, operations]) =>
  Object.entries(operations).flatMap(([method, operation]) => {
    const found = new Set<string>();
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if (status.startsWith('2')) credentialFields(response.content?.['application/json']?.schema, found);
    }
    return found.size ? [{ method: method.toUpperCase(), path, fields: [...found] }] : [];
  }));

let h: Harness;
/** Each surface's credential: the App API's access token (every scope the routes ask), a merchant's and a developer's JWT. */
let credentials: { app: string; merchant: string; developer: string };
beforeAll(async () => {
  h = await createHarness();
  const { accessToken, merchant, partner } = await storeWithApp(h, { scopes: ['read_shop', 'read_products', 'read_orders', 'read_customers'] });
  credentials = { app: accessToken, merchant: merchant.token, developer: partner.token };
});

/** The credential a path's surface is entered with (none for sign-in, the token exchange and the storefront). */
function credentialFor(path: string): string | undefined {
  if (path.startsWith('/api/v1/')) return credentials.app;
  if (path.startsWith('/apps/developer/')) return credentials.developer;
  if (path.startsWith('/auth/') || path.startsWith('/storefront/') || path === '/apps/oauth/token') return undefined;
  return credentials.merchant;
}
afterAll(() => h?.close());

describe('every answer carrying a credential is no-store (RFC 6749 5.1)', () => {
  it('finds the routes by their fields: tokens, client secrets, webhook secrets, checkout tokens and function runs among them', () => {
    const named = carrying.map((r) => `${r.method} ${r.path}`);
    for (const route of [
      'POST /apps/oauth/token', 'POST /auth/login', 'GET /apps/oauth/authorize', 'GET /apps/session-token', 'GET /apps/developer/apps/{appId}',
      'POST /api/v1/webhooks.json', 'GET /storefront/{storeURL}/checkouts/{token}', 'GET /apps/developer/{appId}/functions/{handle}/runs',
      'GET /apps/developer/{appId}/functions/{handle}/logs',
    ]) expect(named).toContain(route);
  });

  it.each(carrying)('$method $path ($fields), with its credential and made-up ids', async ({ method, path }) => {
    // A made-up id in each path parameter: the answer is a refusal, and it must carry the headers too.
    const url = path.replace(/\{[^}]+\}/g, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
    const token = credentialFor(path);
    const res = await h.req(method, url, method === 'GET' || method === 'DELETE' ? { token } : { token, body: {} });
    // Past the surface's authentication (the token endpoint's own client check may refuse: it is the route).
    if (token) expect([401, 403], res.body).not.toContain(res.statusCode);
    expect(res.headers['cache-control'], `${res.statusCode} ${res.body}`).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');
  });
});
