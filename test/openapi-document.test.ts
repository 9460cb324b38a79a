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
