// The API reference is a product (issue 11 section 2): the committed docs/openapi.json is exactly
// what the code describes (an API change shows up in review), every operation has an operationId,
// a summary, its security and its error responses, and Redocly's recommended lint reports no error
// and only the warnings we accept (redocly.yaml, docs/decisions.md).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildOpenapiDocument, documentText, OPENAPI_DOCUMENT_PATH } from '../src/platform/openapi-document.js';
import { ROOT } from './helpers/process.js';

const run = promisify(execFile);
const committedPath = join(ROOT, OPENAPI_DOCUMENT_PATH);

/**
 * Every route row of app-api.md's tables, as the spec writes it (method and path template, its
 * parameters' names included; `{base_url}` dropped). Copied here because CI has the project alone.
 */
const SPEC_ROUTES = [
  'POST /apps/oauth/token',
  'GET /apps/oauth/authorize',
  'GET /api/v1/products.json',
  'PUT /api/v1/products/{id}.json',
  'POST /api/v1/pages.json',
  'POST /api/v1/collections.json',
  'POST /api/v1/files.json',
  'POST /api/v1/shipping_zones.json',
  'POST /api/v1/orders/{orderId}/fulfillments.json',
  'PUT /api/v1/fulfillments/{fulfillment_id}.json',
  'POST /api/v1/product_listings.json',
  'GET /api/v1/menus.json',
  'GET /api/v1/orders.json',
  'GET /api/v1/orders/{id}.json',
  'POST /api/v1/customers.json',
  'GET /api/v1/discounts.json',
  'GET /api/v1/analytics/sales',
  'GET /api/v1/metafields.json',
  'POST /api/v1/webhooks.json',
  'POST /metafields/bulk',
  'PUT /orders/update/{orderId}',
  'PATCH /orders/update-signle-order/{orderId}',
  'GET /metafields/{id}',
  'PATCH /variants/update-single-variant/{id}',
  'GET /apps/developer/analytics',
  'GET /apps/developer/{appId}/installations',
  'GET /apps/developer/{appId}/webhook-deliveries/stats',
  'GET /apps/developer/{appId}/webhook-deliveries',
  'GET /apps/developer/{appId}/functions/{handle}/logs',
  'GET /apps/developer/{appId}/functions/{handle}/runs',
  'GET /apps/developer/earnings',
  'GET /apps/developer/payouts',
  'GET /apps/developer/payouts/{payoutId}',
  'POST /apps/gdpr/acknowledge/{requestId}',
  'POST /apps/gdpr/complete/{requestId}',
  'POST /apps/gdpr/data-request',
  'POST /apps/gdpr/customer-redact',
  'POST /apps/gdpr/shop-redact',
  'GET /apps/gdpr/requests',
  'GET /apps/gdpr/requests/{requestId}',
];

describe('docs/openapi.json', () => {
  it('is the document the code describes (run `npm run openapi` after an API change)', async () => {
    const built = documentText(await buildOpenapiDocument());
    const committed = readFileSync(committedPath, 'utf8');
    // Compared as parsed JSON first for a readable difference, then as text for the formatting.
    expect(JSON.parse(built), 'docs/openapi.json is stale: run `npm run openapi` and commit it').toEqual(JSON.parse(committed));
    expect(built).toBe(committed);
  }, 60_000);

  it('every operation has an operationId (unique), a summary, security and error responses in its shape', () => {
    const doc = JSON.parse(readFileSync(committedPath, 'utf8'));
    const ids = new Set<string>();
    let operations = 0;
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        operations++;
        const where = `${method.toUpperCase()} ${path}`;
        expect(op.operationId, where).toMatch(/^[a-z][A-Za-z0-9]+$/);
        expect(ids.has(op.operationId), `${where}: operationId ${op.operationId} twice`).toBe(false);
        ids.add(op.operationId);
        expect(op.summary, where).toEqual(expect.any(String));
        expect(Array.isArray(op.security), where).toBe(true);
        expect(op.responses['400'], where).toBeDefined();
        // The route's declared shape (C5.1): the errors body or the envelope.
        expect(op.responses['400'].content['application/json'].schema.$ref, where).toMatch(/^#\/components\/schemas\/(ErrorsBody|EnvelopeError)$/);
        if (op.security.length) {
          expect(op.responses['401'], where).toBeDefined();
          expect(op.responses['403'], where).toBeDefined();
        }
        if (path.startsWith('/api/v1/')) expect(op.responses['429'].content['application/json'].schema.$ref, where).toBe('#/components/schemas/RateLimitError');
      }
    }
    expect(operations).toBeGreaterThanOrEqual(100);
  });

  it("documents every route of app-api.md's tables under the spec's own path template and parameter names", () => {
    // A client generated from the reference names its arguments after the path template: the
    // spec's `{fulfillment_id}` documented as `{id}` was a parameter no spec reader would look for.
    const doc = JSON.parse(readFileSync(committedPath, 'utf8'));
    const missing = SPEC_ROUTES.filter((route) => {
      const [method, path] = route.split(' ');
      return !doc.paths[path]?.[method.toLowerCase()];
    });
    expect(missing, 'spec routes the reference does not document as the spec names them').toEqual([]);
    expect(SPEC_ROUTES.length).toBeGreaterThanOrEqual(40);
  });

  it('passes `redocly lint` with no error and only the accepted warnings', async () => {
    let stdout: string;
    try {
      ({ stdout } = await run(join(ROOT, 'node_modules/.bin/redocly'), ['lint', OPENAPI_DOCUMENT_PATH, '--format=json'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }));
    } catch (err: any) {
      stdout = err.stdout; // redocly exits 1 when it finds errors: read its report all the same
    }
    const report = JSON.parse(stdout);
    const errors = report.problems.filter((p: any) => p.severity === 'error').map((p: any) => `${p.ruleId}: ${p.message}`);
    expect(errors).toEqual([]);
    const warnings = new Set(report.problems.map((p: any) => p.ruleId));
    expect([...warnings].filter((rule) => rule !== 'no-ambiguous-paths')).toEqual([]);
  }, 60_000);
});
