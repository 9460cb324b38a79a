// docs/functions.md is true: its example per target is the demo app's function (the same text),
// and run on the input the page shows it gives the output the page shows. The manifest example
// at the top passes the checks of C11.1.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_FUNCTIONS } from '../src/seed/demo-functions.js';
import { declarationProblems, evaluateOnce } from '../src/functions/runtime/index.js';
import { ROOT } from './helpers/process.js';

const page = readFileSync(join(ROOT, 'docs/functions.md'), 'utf8');

/** Fenced blocks by their info string (```json input hide-dear-rates -> "json input hide-dear-rates"). */
const blocks = new Map<string, string>();
for (const m of page.matchAll(/^```([^\n]+)\n([\s\S]*?)^```$/gm)) blocks.set(m[1].trim(), m[2]);

describe('docs/functions.md', () => {
  it('shows an example of each target, each the demo app function of that handle', () => {
    const shown = [...blocks.keys()].filter((k) => k.startsWith('cel ')).map((k) => k.slice(4));
    expect(shown.sort()).toEqual(DEMO_FUNCTIONS.map((f) => f.handle).sort());
    expect(new Set(DEMO_FUNCTIONS.map((f) => f.target)).size).toBe(4);
    for (const f of DEMO_FUNCTIONS) expect(blocks.get(`cel ${f.handle}`)!.trim()).toBe(f.expression);
  });

  it.each(DEMO_FUNCTIONS.map((f) => [f.handle, f] as const))('%s gives the output shown on the input shown', (handle, f) => {
    const checkout = JSON.parse(blocks.get('json checkout')!);
    const input = { checkout, shop: { id: 'shop', domain: 'demo-store', currency: 'USD' }, ...JSON.parse(blocks.get(`json input ${handle}`)!) };
    // What the page says is checked here, not C11.4's 50 ms (function-runtime.test.ts): under a
    // loaded test machine a run measured 57 ms of wall time and failed as TimeoutError.
    const result = evaluateOnce({ target: f.target, expression: f.expression, input, configuration: f.configuration }, { timeoutMs: 10_000 });
    expect(result.errorMessage).toBeNull();
    expect(result.output).toEqual(JSON.parse(blocks.get(`json output ${handle}`)!));
  });

  it("the manifest example passes C11.1's checks", () => {
    const manifest = JSON.parse(page.slice(page.indexOf('```json\n{\n  "extensions"') + 8, page.indexOf('```', page.indexOf('```json\n{\n  "extensions"') + 8)));
    for (const f of manifest.extensions.functions) expect(declarationProblems(f)).toEqual([]);
  });
});
