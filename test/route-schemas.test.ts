// One source of truth (issue 11 section 1), kept true for every route added later (a ratchet
// while the last areas are converted: see PENDING_ROUTES):
// - every documented route declares the success response it sends (so it is serialised through a
//   schema and the reference shows its body), and request schemas for the parts it reads;
// - no handler casts `request.params`, `.query` or `.body`: their types come from the schemas
//   (src/http/typed.ts);
// - no route copies the paging query: `page` and `limit` come from src/http/schemas.ts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PagingQuery } from '../src/http/schemas.js';
import { recordedRoutes } from '../src/surfaces/surface.js';
import { createHarness, type Harness } from './helpers/harness.js';
import { ROOT } from './helpers/process.js';

/**
 * Issue 11 is not finished: these routes (the platform area: health, accounts, apps, OAuth,
 * billing, operator; and the catalog routes still to do) have no response schema yet, and these
 * files still cast `request.*`. The lists only shrink: converting a route fails this test until it
 * leaves the list, and no new route may join it.
 */
const PENDING_ROUTES = new Set([
  'GET /healthz',
  'HEAD /healthz',
  'GET /readyz',
  'HEAD /readyz',
  'POST /auth/signup',
  'POST /auth/login',
  'POST /apps/oauth/token',
  'GET /apps/oauth/authorize',
  'HEAD /apps/oauth/authorize',
  'GET /apps/installations',
  'HEAD /apps/installations',
  'DELETE /apps/installations/:installationId',
  'GET /apps/session-token',
  'HEAD /apps/session-token',
  'POST /stores/staff',
  'POST /apps/developer/apps',
  'GET /apps/developer/apps',
  'HEAD /apps/developer/apps',
  'GET /apps/developer/apps/:appId',
  'HEAD /apps/developer/apps/:appId',
  'PATCH /apps/developer/apps/:appId',
  'POST /apps/developer/apps/:appId/rotate-secret',
  'GET /apps/developer/analytics',
  'HEAD /apps/developer/analytics',
  'GET /apps/developer/:appId/installations',
  'HEAD /apps/developer/:appId/installations',
  'GET /apps/developer/earnings',
  'HEAD /apps/developer/earnings',
  'GET /apps/developer/payouts',
  'HEAD /apps/developer/payouts',
  'GET /apps/developer/payouts/:payoutId',
  'HEAD /apps/developer/payouts/:payoutId',
  'GET /apps/developer/payout-method',
  'HEAD /apps/developer/payout-method',
  'PUT /apps/developer/payout-method',
  'GET /apps/admin/clock',
  'HEAD /apps/admin/clock',
  'POST /apps/admin/clock/advance',
  'POST /apps/admin/jobs/:job/run',
  'POST /apps/admin/payouts/process-scheduled',
  'POST /apps/admin/payouts/:payoutId/mark-paid',
  'POST /apps/admin/payouts/:payoutId/fail',
  'GET /apps/admin/developers/:developerId',
  'HEAD /apps/admin/developers/:developerId',
  'PATCH /apps/admin/developers/:developerId',
  'GET /api/v1/files.json',
  'HEAD /api/v1/files.json',
  'POST /api/v1/files.json',
  'PUT /api/v1/files.json',
  'DELETE /api/v1/files.json',
  'PATCH /api/v1/files.json',
]);
const PENDING_CAST_FILES = new Set([
  'src/accounts/accounts.routes.ts',
  'src/apps/apps.routes.ts',
  'src/billing/billing.routes.ts',
  'src/http/resource-body.ts',
  'src/oauth/oauth.routes.ts',
  'src/platform/operator.routes.ts',
  'src/surfaces/merchant-admin.ts',
]);

let h: Harness;
let routes: readonly RouteOptions[];

beforeAll(async () => {
  h = await createHarness();
  routes = recordedRoutes(h.app);
});
afterAll(() => h?.close());

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('route schemas (issue 11 section 1)', () => {
  it('every documented route declares its success response', () => {
    const documented = routes.filter((r) => r.schema?.hide !== true);
    expect(documented.length).toBeGreaterThanOrEqual(100);
    const missing = documented
      .filter((r) => !Object.keys(r.schema?.response ?? {}).some((code) => /^[23]/.test(code)))
      .flatMap((r) => ([] as string[]).concat(r.method).map((m) => `${m} ${r.url}`));
    // No new route without its response schema; a route converted leaves PENDING_ROUTES.
    expect(missing.filter((r) => !PENDING_ROUTES.has(r)), 'routes without a success response schema').toEqual([]);
    expect([...PENDING_ROUTES].filter((r) => !missing.includes(r)), 'converted: remove from PENDING_ROUTES').toEqual([]);
  });

  it('routes with path parameters declare them', () => {
    const missing = routes
      .filter((r) => r.schema?.hide !== true && /[:*]/.test(r.url) && !r.schema?.params)
      .map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
  });

  it('a route that pages takes `page` and `limit` from the one shared paging schema', () => {
    const copies = routes
      .filter((r) => {
        const props = (r.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties;
        return props && ('page' in props || 'limit' in props) && (props.page !== PagingQuery.properties.page || props.limit !== PagingQuery.properties.limit);
      })
      .map((r) => `${r.method} ${r.url}`);
    expect(copies).toEqual([]);
  });

  it('no source file casts request.params, request.query or request.body', () => {
    const casts = sourceFiles(join(ROOT, 'src')).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${relative(ROOT, file)}:${i + 1}` }))
        .filter(({ line }) => /request\.(params|query|body)\s+as\b/.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    );
    const fileOf = (c: string) => c.slice(0, c.indexOf(':'));
    expect(casts.filter((c) => !PENDING_CAST_FILES.has(fileOf(c))), 'casts of request.* outside the files still to convert').toEqual([]);
    expect([...PENDING_CAST_FILES].filter((f) => !casts.some((c) => fileOf(c) === f)), 'converted: remove from PENDING_CAST_FILES').toEqual([]);
  });
});
