// Review fixes of the function runtime (C11): error messages bounded (C11.4's 20 KB output, the
// service's 1,000-character messages), automatic-discount percentages exact to four decimals
// (C11.3), and compiling held apart from the run's 50 ms deadline (C11.1 accepts 10,000 characters;
// C11.4's limit is the evaluation's). Real worker threads, no mocks.
import { afterAll, describe, expect, it } from 'vitest';
import { boundedMessage } from '../src/http/shapes.js';
import { computeAutomaticDiscounts, percentagePpm, percentageText, type FunctionOutput } from '../src/functions/operations.js';
import { compileFunction, createFunctionRunner, evaluateOnce, type FunctionRunner } from '../src/functions/runtime/index.js';
import { boundedErrorMessage, MAX_ERROR_MESSAGE_CHARS, RUN_TIMEOUT_MS } from '../src/functions/runtime/limits.js';

const DELIVERY = 'cart.delivery-options.transform.run';

/** A valid expression of about 9,000 characters (C11.1 allows 10,000): a table of hide rules. */
function bigExpression(chars = 8900): string {
  const rules: string[] = [];
  for (let i = 0; rules.join(' + ').length < chars; i++) {
    rules.push(`(input.checkout.line_items.exists(l, l.sku == "SKU-${i}") ? [{"hide": {"handle": "h${i}"}}] : [])`);
  }
  return `{"operations": ${rules.join(' + ')}}`;
}
const BIG_INPUT = { checkout: { line_items: [{ sku: 'SKU-3', id: 'a' }] }, deliveryOptions: [] };

describe('C11.4: a run error message is bounded like every error message', () => {
  // 580 copies of a 10 KB configuration string as a map key: CEL's `field not found: <key>` was 5.8 MB.
  const s = 'x'.repeat(10_000);
  const key = Array.from({ length: 580 }, () => 'configuration.s').join('+');
  const request = { target: DELIVERY, expression: `{"operations": [{"hide": {"handle": input[${key}]}}]}`, input: { deliveryOptions: [] }, configuration: { s } };

  it('in-process: at most 1,000 characters and a note of how many more', () => {
    const r = evaluateOnce(request, { timeoutMs: 60_000 });
    expect(r).toMatchObject({ status: 'failure', errorType: 'RuntimeError' });
    expect(r.errorMessage!.startsWith('field not found: xxx')).toBe(true);
    expect(r.errorMessage!.length).toBeLessThan(MAX_ERROR_MESSAGE_CHARS + 40);
    expect(r.errorMessage).toMatch(/\.\.\. \(\d+ more characters\)$/);
  });

  it('through the pool (what a checkout records and the run routes return)', async () => {
    const runner = createFunctionRunner({ threads: 1, spareThreads: 0, timeoutMs: 60_000 });
    try {
      const r = await runner.run(request);
      expect(r).toMatchObject({ status: 'failure', errorType: 'RuntimeError' });
      expect(r.errorMessage!.length).toBeLessThan(MAX_ERROR_MESSAGE_CHARS + 40);
    } finally {
      await runner.close();
    }
  }, 120_000);

  it("cuts as the service's boundedMessage does (the runtime keeps its own copy: it imports nothing of the service)", () => {
    for (const m of ['short', 'y'.repeat(1000), 'y'.repeat(1001), `${'y'.repeat(999)}😀tail`, 'z'.repeat(50_000)]) {
      expect(boundedErrorMessage(m)).toBe(boundedMessage(m));
    }
  });
});

describe('C11.3: an automatic percentage discount is exact to four decimals, rounded once on the amount', () => {
  const line = (id: string, lineMinor: number) => ({ id, lineMinor, codeDiscountMinor: 0 });
  const order = (percentage: number): FunctionOutput => ({ operations: [{ orderDiscountAdd: { message: 'm', value: { percentage } } }] });
  const product = (percentage: number): FunctionOutput => ({ operations: [{ productDiscountAdd: { message: 'p', lineIds: ['a'], value: { percentage } } }] });

  it('100/3 % of 500.00 is 166.67 (not 166.65), and its value says 33.3333', () => {
    const [d] = computeAutomaticDiscounts([line('a', 50_000)], [order(100 / 3)]);
    expect(d).toMatchObject({ valueType: 'percentage', value: '33.3333', amountMinor: 16_667 });
    const [p] = computeAutomaticDiscounts([line('a', 50_000)], [product(100 / 3)]);
    expect(p).toMatchObject({ value: '33.3333', amountMinor: 16_667 });
  });

  it('a percentage under 0.005 still takes its share; a whole one still reads with two decimals', () => {
    const [d] = computeAutomaticDiscounts([line('a', 10_000_000)], [order(0.004)]);
    // 0.004 % of 100,000.00 is 4.00; in hundredths of a percent it was 0 %, and nothing.
    expect(d).toMatchObject({ value: '0.004', amountMinor: 400 });
    expect(computeAutomaticDiscounts([line('a', 10_000)], [order(10)])[0]).toMatchObject({ value: '10.00', amountMinor: 1000 });
    expect(computeAutomaticDiscounts([line('a', 10_000)], [order(12.5)])[0]).toMatchObject({ value: '12.50', amountMinor: 1250 });
  });

  it('the double is read as written, rounded half up at the fifth decimal', () => {
    expect(percentagePpm(1.00005)).toBe(10_001);
    expect(percentagePpm(0.29)).toBe(2900);
    expect(percentagePpm(100)).toBe(1_000_000);
    expect(percentagePpm(1e-7)).toBe(0);
    expect(percentageText(333_333)).toBe('33.3333');
    expect(percentageText(0)).toBe('0.00');
    expect(percentageText(1_000_000)).toBe('100.00');
  });
});

describe('C11.1/C11.4: compiling is not the run; a 9,000-character expression runs', () => {
  const expression = bigExpression();
  let runner: FunctionRunner | null = null;
  afterAll(() => runner?.close());

  /** The expression's compile time here (the faster of two), so the tests below hold the compile over the deadline they set. */
  function compileMs(): number {
    let best = Infinity;
    for (const extra of ['\n', '\n\n']) {
      const t = performance.now();
      expect(compileFunction(expression + extra)).toMatchObject({ ok: true });
      best = Math.min(best, performance.now() - t);
    }
    return best;
  }
  /**
   * A deadline half the compile time (at most C11.4's 50 ms): a run held to it with its compile
   * inside cannot meet it; the evaluation (1-2 ms warm, more in a fresh worker) can. Several runs,
   * one success needed: a loaded machine's GC pause or lost time slice may still push one
   * evaluation over it. (A third of the compile, 12.6 ms on a slow guest, saw all five pool runs
   * stopped at 13-15 ms once, with the full suite beside it: each stop replaces the worker, so each
   * next evaluation is a cold one.)
   */
  const deadlineBelowCompile = () => Math.min(50, compileMs() / 2);
  const ANSWER = { operations: [{ hide: { handle: 'h3' } }] };

  it('in-process: the deadline counts the evaluation, not the compile', () => {
    const deadline = deadlineBelowCompile();
    // Each run a fresh expression (a space more): compiled each time, in no cache.
    const results = [1, 2, 3, 4, 5].map((n) => evaluateOnce({ target: DELIVERY, expression: expression + ' '.repeat(n), input: BIG_INPUT }, { timeoutMs: deadline }));
    // With the compile inside the deadline, every one of them was a TimeoutError.
    const ok = results.filter((r) => r.status === 'success');
    expect(ok.length, JSON.stringify({ deadline, results })).toBeGreaterThan(0);
    for (const r of ok) expect(r.output).toEqual(ANSWER);
  });

  it('through the pool: runs, rather than being stopped mid-compile at every run', async () => {
    const deadline = deadlineBelowCompile();
    runner = createFunctionRunner({ threads: 1, spareThreads: 0, timeoutMs: deadline, maxWaitMs: 60_000 });
    await runner.ready();
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await runner.run({ target: DELIVERY, expression, input: BIG_INPUT }));
    // Before: each run was stopped while compiling, its worker (and the worker's cache) with it,
    // so the next compiled again and was stopped again.
    const ok = results.filter((r) => r.status === 'success');
    expect(ok.length, JSON.stringify({ deadline, results })).toBeGreaterThan(0);
    for (const r of ok) expect(r.output).toEqual(ANSWER);
  }, 120_000);

  it('a compile past its own budget is stopped and fails as a RuntimeError, freeing the worker', async () => {
    const pool = createFunctionRunner({ threads: 1, spareThreads: 0, timeoutMs: 1, compileTimeoutMs: 1, maxWaitMs: 60_000 });
    try {
      await pool.ready();
      expect(compileMs()).toBeGreaterThan(5);
      const r = await pool.run({ target: DELIVERY, expression: `${expression}  `, input: BIG_INPUT });
      expect(r).toMatchObject({ status: 'failure', errorType: 'RuntimeError', output: null });
      expect(r.errorMessage).toMatch(/^the expression was still compiling after [\d.]+ ms and was stopped; the limit is 1 ms$/);
      expect(pool.stats()).toMatchObject({ timeouts: 0, workersReplaced: 1 });
      // The replacement takes the next run: it runs (on a busy machine even this compile can pass a
      // budget of 1 ms, so its outcome is not asserted), never "not run" for want of a worker.
      const next = await pool.run({ target: DELIVERY, expression: '{"operations": []}', input: {} });
      expect(next.errorMessage ?? '').not.toMatch(/^not run/);
    } finally {
      await pool.close();
    }
  }, 120_000);
});

describe('C11.4: a run whose expression compiled slowly is still stopped 50 ms after its evaluation starts', () => {
  it('a runaway after a cold compile of its task is a TimeoutError near the limit, not seconds later', async () => {
    const runner = createFunctionRunner({ threads: 1, spareThreads: 0, maxWaitMs: 60_000 });
    try {
      await runner.ready();
      const target = 'cart.validations.generate.run';
      const list = `[${Array.from({ length: 250 }, (_, i) => i).join(',')}]`;
      // Compiles for longer than a run's limit (a long select chain), then does nothing.
      const slowCompile = { target, input: {}, expression: `{"operations": [{"validationAdd": {"errors": has(input${'.a'.repeat(2300)}) ? [] : []}}]}` } as const;
      // Evaluates for seconds (250^3 comparisons) if nothing stops it.
      const runaway = { target, input: {}, expression: `{"operations": [{"validationAdd": {"errors": ${list}.all(a, ${list}.all(b, ${list}.all(c, c >= 0))) ? [] : []}}]}` } as const;
      const [, stopped] = await runner.runAll([slowCompile, runaway]);
      expect(stopped).toMatchObject({ status: 'failure', errorType: 'TimeoutError' });
      // Stopped within the limit and a timer's slack of the evaluation's start (was: 0.3 to 10 s, 2.8 s
      // here); the bound leaves a busy machine's scheduling room and is still far below the failure.
      expect(stopped.durationMs).toBeLessThan(RUN_TIMEOUT_MS * 20);
    } finally {
      await runner.close();
    }
  }, 60_000);
});

describe('C11.3: text a function gives the buyer to read is never blank, by the platform\'s one rule (src/text.ts)', () => {
  const blanks = ['', ' ', '\t', '\u200b', '\u2060', '\ufeff', '\u3164', ' \u200b\u00a0', '\u180e'];
  const outputs: [string, (text: string) => unknown][] = [
    ['cart.delivery-options.transform.run', (t) => ({ operations: [{ rename: { handle: 'zone-1', title: t } }] })],
    ['cart.payment-methods.transform.run', (t) => ({ operations: [{ rename: { handle: 'card', title: t } }] })],
    ['cart.validations.generate.run', (t) => ({ operations: [{ validationAdd: { errors: [{ message: t, target: 'cart' }] } }] })],
    ['cart.lines.discounts.generate.run', (t) => ({ operations: [{ orderDiscountAdd: { message: t, value: { percentage: 10 } } }] })],
    ['cart.lines.discounts.generate.run', (t) => ({ operations: [{ productDiscountAdd: { message: t, lineIds: ['l1'], value: { fixedAmount: '1.00' } } }] })],
  ];

  it('a blank title or message is an InvalidOutputError naming the field; visible text (with invisible characters inside) runs', () => {
    for (const [target, outputOf] of outputs) {
      for (const text of [...blanks, 'Express', 'a\u200bb']) {
        const r = evaluateOnce({ target: target as never, expression: 'input.output', input: { output: outputOf(text) } });
        if (blanks.includes(text)) {
          expect(r, `${target} ${JSON.stringify(text)}`).toMatchObject({ status: 'failure', errorType: 'InvalidOutputError' });
          expect(r.errorMessage).toMatch(/blank|fewer than 1/);
        } else expect(r, `${target} ${JSON.stringify(text)}`).toMatchObject({ status: 'success' });
      }
    }
  });
});
