// The worker pool's isolation of runs from each other (C11.1, C11.4; docs/functions.md): a run that
// did not make its worker die is never failed for it, a worker's compiled programs are bounded by
// memory (a set of functions each of which runs alone also runs together), and a declaration's
// check depends on its own expression only, not on what other manifests compiled before it.
// Real worker threads, no mocks.
import { describe, expect, it } from 'vitest';
import { createFunctionRunner, type RunRequest } from '../src/functions/runtime/index.js';
import { checkDeclaredExpressions } from '../src/functions/developer-runs.js';
import { readManifestFunctions } from '../src/functions/manifest-functions.js';

const VALIDATIONS = 'cart.validations.generate.run';

/**
 * A valid function whose compiled program is large: `has()` of a path `levels` deep. Its program
 * grows with the square of the depth (1,000 levels: ~6 MB kept; 4,000: ~60 MB), so a dozen of them
 * fill a worker's 64 MB heap though each alone runs; `variant` makes each one a distinct expression.
 */
const deepHas = (levels: number, variant = 0) =>
  `{"operations": [{"validationAdd": {"errors": has(input${'.a'.repeat(levels + variant)}) ? [] : []}}]}`;

/** Another store's validation: one error for a line over the configured quantity. */
const victim: RunRequest = {
  target: VALIDATIONS,
  input: { checkout: { line_items: [{ id: 'l1', quantity: 9 }] } },
  configuration: { max: 5 },
  expression: '{"operations": [{"validationAdd": {"errors": input.checkout.line_items.filter(l, l.quantity > double(configuration.max)).map(l, {"message": "too many", "target": l.id})}}]}',
};
const victimOutput = { operations: [{ validationAdd: { errors: [{ message: 'too many', target: 'l1' }] } }] };

/** Three nested comprehensions over 200 elements: seconds of CPU, stopped at the deadline. */
const RUNAWAY = 'input.big.all(a, input.big.all(b, input.big.all(c, a + b + c >= 0.0)))';
const BIG = { big: Array.from({ length: 200 }, (_, i) => i) };

describe('the worker pool: one run never fails for another', () => {
  it("another store's functions that only together exceed the heap make neither them nor a run gathered with them fail", async () => {
    // The checkouts' pool as the service makes it, but for the run limit: a worker whose heap is
    // nearly full spends its collections inside runs, and on a loaded 2-core CI machine six of these
    // runs went past the 50 ms default. The limit is tested elsewhere; this test is the heap's.
    const pool = createFunctionRunner({ timeoutMs: 2000 });
    try {
      await pool.ready();
      const heavy = Array.from({ length: 14 }, (_, i): RunRequest => ({ target: VALIDATIONS, input: { checkout: {} }, expression: deepHas(1000, i) }));
      // Asked in the same turn: gathered into one task.
      const [theirs, mine] = await Promise.all([pool.runAll(heavy), pool.run(victim)]);
      expect(mine).toMatchObject({ status: 'success', output: victimOutput });
      // What each gives alone (its path is not in the input): no worker's failure.
      expect(theirs.map((r) => r.errorMessage)).toEqual(heavy.map(() => 'field not found: a'));
    } finally {
      await pool.close();
    }
  }, 20_000);

  it('one worker keeps no more compiled programs than its heap holds: functions that each run alone run one after another', async () => {
    const pool = createFunctionRunner({ threads: 1, spareThreads: 0, timeoutMs: 5000, maxWaitMs: 20_000 });
    try {
      await pool.ready();
      for (let i = 0; i < 16; i++) {
        const r = await pool.run({ target: VALIDATIONS, input: { checkout: {} }, expression: deepHas(1000, i) });
        expect({ i, error: r.errorMessage }).toEqual({ i, error: 'field not found: a' });
      }
      expect(pool.stats().workersReplaced).toBe(0);
    } finally {
      await pool.close();
    }
  }, 20_000);

  it('runaways of another caller, more than the passes, gathered with a run: each fails alone, the run succeeds', async () => {
    const pool = createFunctionRunner({});
    try {
      await pool.ready();
      const runaways = Array.from({ length: 5 }, (): RunRequest => ({ target: VALIDATIONS, expression: RUNAWAY, input: BIG }));
      const [theirs, mine] = await Promise.all([pool.runAll(runaways), pool.run(victim)]);
      expect(mine).toMatchObject({ status: 'success', output: victimOutput });
      expect(theirs.map((r) => r.errorType)).toEqual(runaways.map(() => 'TimeoutError'));
    } finally {
      await pool.close();
    }
  }, 20_000);
});

// The declarations' checks run in a worker at the developers' lower priority (niceness 10): on a
// 2-core machine with two other test files busy, its compiles can be starved past their budgets.
// Retried then; a check that depends on more than its expression fails every try.
describe("declarations' checks depend on the expression only", { retry: 2 }, () => {
  it("valid expressions whose programs together exceed the heap all compile, whatever was checked before", async () => {
    // Two manifests, one after the other, each of 14 distinct functions of ~6 MB of program.
    for (const manifest of [0, 1]) {
      const expressions = Array.from({ length: 14 }, (_, i) => deepHas(1000, 14 * manifest + i));
      const problems = await checkDeclaredExpressions(expressions);
      expect(problems).toEqual(expressions.map(() => null));
    }
  }, 30_000);

  it('an expression whose own compile exceeds the memory limit is a 400 naming its handle, every time; its siblings are not failed with it', async () => {
    const hog = deepHas(4800);
    expect(hog.length).toBeLessThanOrEqual(10_000);
    for (let attempt = 0; attempt < 2; attempt++) {
      const problems = await checkDeclaredExpressions(['{"operations": []}', hog, deepHas(100, attempt)]);
      expect(problems[0]).toBeNull();
      expect(problems[1]).toMatch(/exceeded the memory limit/);
      expect(problems[2]).toBeNull();
    }
    const manifest = [
      { handle: 'fine', target: VALIDATIONS, expression: '{"operations": []}' },
      { handle: 'too-big', target: VALIDATIONS, expression: hog },
    ];
    await expect(readManifestFunctions(manifest)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/\(too-big\).*memory limit/) });
  }, 30_000);
});
