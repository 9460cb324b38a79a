// One source of truth (issue 11 section 1), kept true for every route added later:
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
 * Routes reserved by app-api.md that answer only an error for now (the asset library): they
 * declare that error response instead of a success.
 */
const RESERVED = (url: string) => url === '/api/v1/files.json';

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
    const declares = (r: RouteOptions, status: RegExp) => Object.keys(r.schema?.response ?? {}).some((code) => status.test(code));
    const missing = documented
      .filter((r) => !(RESERVED(r.url) ? declares(r, /^404$/) : declares(r, /^[23]/)))
      .flatMap((r) => ([] as string[]).concat(r.method).map((m) => `${m} ${r.url}`));
    expect(missing, 'routes without a response schema').toEqual([]);
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
        return props && (('page' in props && props.page !== PagingQuery.properties.page) || ('limit' in props && props.limit !== PagingQuery.properties.limit));
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
    expect(casts).toEqual([]);
  });
});
