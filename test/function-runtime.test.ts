// The function runtime of C11 (src/functions/runtime): CEL compile checks (C11.1), the targets'
// output shapes (C11.3), every run error of C11.4 in-process and through the worker pool, a runaway
// expression stopped at its deadline while the event loop stays free, the pool's saturation, and
// the module's independence from the rest of the service. Real worker threads, no mocks.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ERROR_TYPES, MAX_CONFIGURATION_BYTES, MAX_EXPRESSION_CHARS, MAX_INPUT_BYTES, MAX_OUTPUT_BYTES, OUTPUT_SCHEMAS, TARGETS,
  celToJson, compileFunction, configurationProblem, createFunctionRunner, declarationProblems, evaluateOnce,
  type FunctionRunner, type RunRequest, type RunResult,
} from '../src/functions/runtime/index.js';

/**
 * A run in this thread with a limit of seconds: the tests that use it are about results, and a
 * loaded machine must not turn a 2 ms run into a TimeoutError (the 50 ms limit has its own tests).
 */
const evaluate = (request: RunRequest) => evaluateOnce(request, { timeoutMs: 5000 });

const DELIVERY = 'cart.delivery-options.transform.run';
const PAYMENT = 'cart.payment-methods.transform.run';
const VALIDATIONS = 'cart.validations.generate.run';
const DISCOUNTS = 'cart.lines.discounts.generate.run';

/** A run whose expression is the output itself, written as CEL. */
const out = (target: string, operations: string, input: unknown = {}) =>
  evaluate({ target, expression: `{"operations": ${operations}}`, input });

function expectFailure(r: RunResult, errorType: string, message?: RegExp) {
  expect(r).toMatchObject({ status: 'failure', errorType, output: null });
  if (message) expect(r.errorMessage).toMatch(message);
}

/** Three nested comprehensions over 200 elements: 8 million steps, seconds of CPU; always terminates. */
const RUNAWAY = 'input.big.all(a, input.big.all(b, input.big.all(c, a + b + c >= 0.0)))';
const BIG = { big: Array.from({ length: 200 }, (_, i) => i) };
/** Tens of milliseconds of work on BIG (a 200 x 200 comprehension), ending in a RuntimeError (not the target's output). */
const SLOW = 'input.big.map(a, input.big.map(b, a + b)).size()';
/** Lets the event loop turn once: runs asked before it are sent to the workers (pool.ts gathers each turn's asks). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const checkoutInput = {
  shop: { id: 's1', domain: 'demo.example', currency: 'USD' },
  checkout: {
    line_items: [
      { id: 'l1', title: 'Mug', quantity: 2, price: '12.50' },
      { id: 'l2', title: 'Poster', quantity: 5, price: '30.00' },
    ],
  },
  deliveryOptions: [
    { handle: 'zone-1', title: 'Standard', price: '5.00', code: 'Standard', source: null },
    { handle: 'zone-2', title: 'Express', price: '25.00', code: 'Express', source: null },
  ],
};

describe('C11.1 compiling an expression', () => {
  it('parses and checks; a good expression compiles, comprehension variables and type names included', () => {
    for (const e of ['{"operations": []}', 'input.checkout.line_items.map(l, l.id)', 'type(input.x) == double', '[1].map(x, x + 1)']) {
      expect(compileFunction(e)).toMatchObject({ ok: true });
    }
  });

  it('names the problem: syntax, unknown variable, unknown function, too long, not a string, empty', () => {
    expect(compileFunction('{"operations": [')).toEqual({ ok: false, problem: expect.stringMatching(/^expression does not parse: <input>:1:/) });
    expect(compileFunction('input.x + discount')).toEqual({ ok: false, problem: 'expression uses an unknown variable "discount" (the variables are input and configuration)' });
    expect(compileFunction('[1].map(x, x + y)')).toEqual({ ok: false, problem: 'expression uses an unknown variable "y" (the variables are input and configuration)' });
    expect(compileFunction('sum(input.xs)')).toEqual({ ok: false, problem: 'expression calls an unknown function "sum"' });
    expect(compileFunction(5)).toEqual({ ok: false, problem: 'expression must be a string' });
    expect(compileFunction('  ')).toEqual({ ok: false, problem: 'expression is empty' });
    const longest = `"${'x'.repeat(MAX_EXPRESSION_CHARS - 2)}"`;
    expect(compileFunction(longest)).toMatchObject({ ok: true });
    expect(compileFunction(`${longest} `)).toEqual({ ok: false, problem: 'expression is too long (10001 characters; the maximum is 10000)' });
  });

  it('configuration: a JSON object of at most 10 KB (C11.1)', () => {
    expect(configurationProblem(undefined)).toBeNull();
    expect(configurationProblem({ max: 3 })).toBeNull();
    expect(configurationProblem([1])).toBe('configuration must be a JSON object');
    expect(configurationProblem('x')).toBe('configuration must be a JSON object');
    const justFits = { k: 'x'.repeat(MAX_CONFIGURATION_BYTES - 8) };
    expect(JSON.stringify(justFits)).toHaveLength(MAX_CONFIGURATION_BYTES);
    expect(configurationProblem(justFits)).toBeNull();
    expect(configurationProblem({ k: 'x'.repeat(MAX_CONFIGURATION_BYTES) })).toMatch(/^configuration is too large \(10248 bytes; the maximum is 10240\)$/);
  });
});

describe('C11.1 a declared function: every problem, for the 400 that names its handle', () => {
  it('target, expression and configuration together', () => {
    expect(declarationProblems({ target: DISCOUNTS, expression: '{"operations": []}', configuration: { a: 1 } })).toEqual([]);
    expect(declarationProblems({ target: DISCOUNTS, expression: '{"operations": []}' })).toEqual([]);
    expect(declarationProblems({ target: 'cart.tax.run', expression: 'nope(', configuration: [] })).toEqual([
      `target must be one of ${TARGETS.join(', ')}`,
      expect.stringMatching(/^expression does not parse: /),
      'configuration must be a JSON object',
    ]);
  });
});

describe('C11.1 numbers: JSON numbers are doubles, output numbers ints or doubles, money a decimal string', () => {
  const value = (expression: string, input: unknown = {}) => {
    const c = compileFunction(expression);
    if (!c.ok) throw new Error(c.problem);
    return celToJson(c.evaluate({ input, configuration: {} }));
  };

  it('an input number is a double: adding an int is a CEL error, adding a double or converting is not', () => {
    expect(evaluate({ target: VALIDATIONS, expression: 'input.n + 1', input: { n: 2 } })).toMatchObject({
      errorType: 'RuntimeError', errorMessage: expect.stringContaining("no matching overload for '_+_' applied to '(double, int)'"),
    });
    expect(value('input.n + 1.0', { n: 2 })).toBe(3);
    expect(value('int(input.n) + 1', { n: 2 })).toBe(3);
    expect(value('double(input.price) * 2.0', { price: '12.50' })).toBe(25);
  });

  it('CEL values back to JSON: ints, uints, doubles, strings, bools, null, lists, maps', () => {
    expect(value('[1, 2u, 2.5, "s", true, null, {"a": [{"b": -3}]}]')).toEqual([1, 2, 2.5, 's', true, null, { a: [{ b: -3 }] }]);
    expect(value('input', { x: [1.5, { y: null }] })).toEqual({ x: [1.5, { y: null }] });
  });

  it('what JSON cannot hold is named: bytes, timestamps, types, non-string keys, infinities, huge ints', () => {
    const problem = (e: string) => { try { value(e); return null; } catch (err) { return (err as Error).message; } };
    expect(problem('{"x": b"ab"}')).toBe('output.x is a bytes value, which is not JSON');
    expect(problem('[timestamp("2026-01-01T00:00:00Z")]')).toBe('output[0] is a google.protobuf.Timestamp value, which is not JSON');
    expect(problem('int')).toBe('output is a type value, which is not JSON');
    expect(problem('{1: "a"}')).toBe('output has a key that is not a string (1)');
    expect(problem('1.0 / 0.0')).toBe('output is Infinity, which JSON cannot hold');
    expect(problem('9223372036854775807')).toBe('output is the integer 9223372036854775807, too large for JSON numbers');
    expect(out(VALIDATIONS, '[{"validationAdd": {"errors": [{"message": b"x", "target": "cart"}]}}]')).toMatchObject({
      errorType: 'InvalidOutputError', errorMessage: 'output.operations[0].validationAdd.errors[0].message is a bytes value, which is not JSON',
    });
  });
});

describe('C11.3 targets and their output shapes', () => {
  it('the four targets, each with a schema', () => {
    expect([...TARGETS]).toEqual([DELIVERY, PAYMENT, VALIDATIONS, DISCOUNTS]);
    for (const t of TARGETS) expect(OUTPUT_SCHEMAS[t]).toMatchObject({ type: 'object', required: ['operations'] });
  });

  for (const target of [DELIVERY, PAYMENT]) {
    it(`${target}: hide, rename, move (index a whole number >= 0, int or double)`, () => {
      const ok = out(target, '[{"hide": {"handle": "a"}}, {"rename": {"handle": "b", "title": "Fast"}}, {"move": {"handle": "c", "index": 0}}, {"move": {"handle": "c", "index": 2.0}}]');
      expect(ok).toMatchObject({ status: 'success', errorType: null, errorMessage: null });
      expect(ok.output).toEqual({ operations: [{ hide: { handle: 'a' } }, { rename: { handle: 'b', title: 'Fast' } }, { move: { handle: 'c', index: 0 } }, { move: { handle: 'c', index: 2 } }] });
      expect(out(target, '[]').output).toEqual({ operations: [] });

      expectFailure(out(target, '[{"move": {"handle": "c", "index": 1.5}}]'), 'InvalidOutputError', /^output\.operations\[0\]\.move\.index must be integer$/);
      expectFailure(out(target, '[{"move": {"handle": "c", "index": -1}}]'), 'InvalidOutputError', /index must be >= 0/);
      expectFailure(out(target, '[{"move": {"handle": "c", "index": "1"}}]'), 'InvalidOutputError', /index must be integer/);
      expectFailure(out(target, '[{"remove": {"handle": "a"}}]'), 'InvalidOutputError', /^output\.operations\[0\] has an unknown key "remove" \(allowed: hide, rename, move\)$/);
      expectFailure(out(target, '[{"hide": {"handle": "a"}, "rename": {"handle": "a", "title": "x"}}]'), 'InvalidOutputError', /must have exactly one key/);
      expectFailure(out(target, '[{"hide": {"handle": "a", "why": "x"}}]'), 'InvalidOutputError', /unknown key "why"/);
      expectFailure(out(target, '[{"rename": {"handle": "a"}}]'), 'InvalidOutputError', /must have required property 'title'/);
      expectFailure(out(target, '[{"validationAdd": {"errors": []}}]'), 'InvalidOutputError', /unknown key "validationAdd"/);
      expectFailure(evaluate({ target, expression: '[]', input: {} }), 'InvalidOutputError', /^output must be object$/);
      expectFailure(evaluate({ target, expression: '{"ops": []}', input: {} }), 'InvalidOutputError', /^output must have required property 'operations'$/);
    });
  }

  it(`${VALIDATIONS}: errors with message and target (cart or a line id)`, () => {
    const r = evaluate({
      target: VALIDATIONS,
      expression: '{"operations": [{"validationAdd": {"errors": input.checkout.line_items.filter(l, l.quantity > configuration.max).map(l, {"message": "At most " + string(int(configuration.max)) + " of " + l.title, "target": l.id})}}]}',
      input: checkoutInput,
      configuration: { max: 3 },
    });
    expect(r.output).toEqual({ operations: [{ validationAdd: { errors: [{ message: 'At most 3 of Poster', target: 'l2' }] } }] });
    expectFailure(out(VALIDATIONS, '[{"validationAdd": {"errors": [{"message": "x"}]}}]'), 'InvalidOutputError', /must have required property 'target'/);
    expectFailure(out(VALIDATIONS, '[{"validationAdd": {"errors": [{"message": "", "target": "cart"}]}}]'), 'InvalidOutputError', /message must NOT have fewer than 1 characters/);
    expectFailure(out(VALIDATIONS, '[{"hide": {"handle": "a"}}]'), 'InvalidOutputError', /unknown key "hide" \(allowed: validationAdd\)/);
  });

  it(`${DISCOUNTS}: order and product discounts, percentage 0..100 (int or double) or a decimal-string fixed amount`, () => {
    const ok = out(DISCOUNTS, '[{"orderDiscountAdd": {"message": "10% off", "value": {"percentage": 10}}}, {"orderDiscountAdd": {"message": "m", "value": {"percentage": 12.5}}}, {"productDiscountAdd": {"message": "Mugs", "lineIds": ["l1"], "value": {"fixedAmount": "5.00"}}}]');
    expect(ok.output).toEqual({ operations: [
      { orderDiscountAdd: { message: '10% off', value: { percentage: 10 } } },
      { orderDiscountAdd: { message: 'm', value: { percentage: 12.5 } } },
      { productDiscountAdd: { message: 'Mugs', lineIds: ['l1'], value: { fixedAmount: '5.00' } } },
    ] });
    expect(out(DISCOUNTS, '[{"orderDiscountAdd": {"message": "m", "value": {"percentage": 0}}}, {"orderDiscountAdd": {"message": "m", "value": {"percentage": 100.0}}}, {"orderDiscountAdd": {"message": "m", "value": {"fixedAmount": "5"}}}]').status).toBe('success');
    const bad = (value: string) => out(DISCOUNTS, `[{"orderDiscountAdd": {"message": "m", "value": ${value}}}]`);
    expectFailure(bad('{"percentage": 101}'), 'InvalidOutputError', /percentage must be <= 100/);
    expectFailure(bad('{"percentage": -1.0}'), 'InvalidOutputError', /percentage must be >= 0/);
    expectFailure(bad('{"fixedAmount": 5.0}'), 'InvalidOutputError', /fixedAmount must be string/);
    expectFailure(bad('{"fixedAmount": "-5.00"}'), 'InvalidOutputError', /fixedAmount must be a decimal string such as "5.00"/);
    expectFailure(bad('{"fixedAmount": "5,00"}'), 'InvalidOutputError', /decimal string/);
    expectFailure(bad('{"percentage": 10, "fixedAmount": "1.00"}'), 'InvalidOutputError', /value must have exactly one key \(one of: percentage, fixedAmount\)/);
    expectFailure(bad('{"amount": "1.00"}'), 'InvalidOutputError', /unknown key "amount"/);
    expectFailure(out(DISCOUNTS, '[{"productDiscountAdd": {"message": "m", "lineIds": [], "value": {"percentage": 5}}}]'), 'InvalidOutputError', /lineIds must NOT have fewer than 1 items/);
  });
});

describe('C11.4 run errors, in-process (evaluateOnce, the SDK\'s local run)', () => {
  it('success carries output, sizes and duration', () => {
    const r = evaluate({
      target: DELIVERY,
      expression: '{"operations": input.deliveryOptions.filter(o, double(o.price) > 20.0).map(o, {"hide": {"handle": o.handle}})}',
      input: checkoutInput,
    });
    expect(r).toMatchObject({ status: 'success', errorType: null, errorMessage: null, output: { operations: [{ hide: { handle: 'zone-2' } }] } });
    expect(r.inputBytes).toBe(Buffer.byteLength(JSON.stringify(checkoutInput)));
    expect(r.outputBytes).toBe(JSON.stringify(r.output).length);
    expect(r.durationMs).toBeGreaterThan(0);
  });

  it('InputSizeLimitExceededError: input over 128 KB is not run; 128 KB exactly is', () => {
    const sized = (bytes: number) => ({ s: 'x'.repeat(bytes - 8) });
    expect(JSON.stringify(sized(MAX_INPUT_BYTES))).toHaveLength(MAX_INPUT_BYTES);
    expect(out(VALIDATIONS, '[]', sized(MAX_INPUT_BYTES)).status).toBe('success');
    const r = evaluate({ target: VALIDATIONS, expression: 'input.nothing.here', input: sized(MAX_INPUT_BYTES + 1) });
    expect(r).toEqual({
      status: 'failure', errorType: 'InputSizeLimitExceededError', errorMessage: 'input is 131073 bytes; the maximum is 131072 (not run)',
      output: null, inputBytes: MAX_INPUT_BYTES + 1, outputBytes: 0, durationMs: 0,
    });
    // A configuration over its 10 KB is not run either.
    expectFailure(evaluate({ target: VALIDATIONS, expression: '{"operations": []}', input: {}, configuration: { k: 'x'.repeat(MAX_CONFIGURATION_BYTES) } }), 'InputSizeLimitExceededError', /configuration is too large/);
  });

  it('RuntimeError: an evaluation error, with CEL\'s message; a bad expression or target too', () => {
    expectFailure(evaluate({ target: VALIDATIONS, expression: '1 / 0', input: {} }), 'RuntimeError', /divide by zero/);
    expectFailure(evaluate({ target: VALIDATIONS, expression: 'input.checkout.nothing', input: checkoutInput }), 'RuntimeError', /no such key: nothing|field not found: nothing/);
    expectFailure(evaluate({ target: VALIDATIONS, expression: '{"operations": [', input: {} }), 'RuntimeError', /^expression does not parse/);
    expectFailure(evaluate({ target: 'cart.nothing.run', expression: '{"operations": []}', input: {} }), 'RuntimeError', /^unknown target "cart.nothing.run"$/);
    expectFailure(evaluate({ target: VALIDATIONS, expression: '{"operations": []}', input: () => 1 }), 'RuntimeError', /^input is not JSON$/);
  });

  it('OutputTooLargeError: output JSON over 20 KB, its size reported', () => {
    const expression = '{"operations": [{"validationAdd": {"errors": input.messages.map(m, {"message": m, "target": "cart"})}}]}';
    // Messages of 500 characters, the last one sized so the output is `bytes` long.
    const messages = (bytes: number) => {
      const list = Array.from({ length: 38 }, () => 'x'.repeat(500));
      const size = (l: string[]) => JSON.stringify({ operations: [{ validationAdd: { errors: l.map((message) => ({ message, target: 'cart' })) } }] }).length;
      list[37] = 'x'.repeat(500 + bytes - size(list));
      expect(size(list)).toBe(bytes);
      return { messages: list };
    };
    expect(evaluate({ target: VALIDATIONS, expression, input: messages(MAX_OUTPUT_BYTES) })).toMatchObject({ status: 'success', outputBytes: MAX_OUTPUT_BYTES });
    const r = evaluate({ target: VALIDATIONS, expression, input: messages(MAX_OUTPUT_BYTES + 1) });
    expect(r).toMatchObject({ status: 'failure', errorType: 'OutputTooLargeError', output: null, outputBytes: MAX_OUTPUT_BYTES + 1, errorMessage: 'output is 20481 bytes; the maximum is 20480' });
  });

  it('TimeoutError: a run that took longer than the limit fails, even when it could not be stopped', () => {
    const r = evaluateOnce({ target: VALIDATIONS, expression: 'input.big.all(a, input.big.all(b, a + b >= 0.0)) ? {"operations": []} : {"operations": []}', input: BIG }, { timeoutMs: 1 });
    expect(r).toMatchObject({ status: 'failure', errorType: 'TimeoutError', output: null, errorMessage: expect.stringMatching(/^the run took [0-9.]+ ms; the limit is 1 ms$/) });
    expect(r.durationMs).toBeGreaterThan(1);
  });

  it('the five error types of C11.4', () => {
    expect([...ERROR_TYPES]).toEqual(['InputSizeLimitExceededError', 'RuntimeError', 'InvalidOutputError', 'OutputTooLargeError', 'TimeoutError']);
  });
});

describe('C11.4 the worker pool', () => {
  let runner: FunctionRunner;
  beforeAll(async () => {
    runner = createFunctionRunner({ threads: 2 });
    await runner.ready();
  });
  afterAll(() => runner?.close());

  const strip = ({ durationMs: _d, ...rest }: RunResult) => rest;

  it('gives the in-process result for every kind of run', async () => {
    const cases = [
      { target: DELIVERY, expression: '{"operations": input.deliveryOptions.map(o, {"rename": {"handle": o.handle, "title": o.title + " (" + o.price + ")"}})}', input: checkoutInput },
      { target: VALIDATIONS, expression: '1 / 0', input: {} },
      { target: VALIDATIONS, expression: '{"operations": [{"hide": {"handle": "a"}}]}', input: {} },
      { target: VALIDATIONS, expression: '{"operations": [{"validationAdd": {"errors": input.m.map(m, {"message": m, "target": "cart"})}}]}', input: { m: Array.from({ length: 30 }, () => 'x'.repeat(999)) } },
      { target: VALIDATIONS, expression: '{"operations": []}', input: { s: 'x'.repeat(MAX_INPUT_BYTES) } },
      { target: DISCOUNTS, expression: '{"operations": [{"orderDiscountAdd": {"message": "m", "value": {"percentage": configuration.p}}}]}', input: {}, configuration: { p: 15 } },
    ];
    // A five seconds' limit on both sides, and as long a wait for a worker: what is compared is the
    // result, and a loaded machine (two test suites at once) must not turn a 60 ms run, or a run
    // queued behind five others, into a TimeoutError on one side only (the 50 ms stop: the next test).
    const patient = createFunctionRunner({ threads: 2, timeoutMs: 5000, maxWaitMs: 20_000 });
    try {
      const results = await Promise.all(cases.map((c) => patient.run(c)));
      expect(results.map((r) => r.errorType)).toEqual([null, 'RuntimeError', 'InvalidOutputError', 'OutputTooLargeError', 'InputSizeLimitExceededError', null]);
      expect(results.map(strip)).toEqual(cases.map((c) => strip(evaluateOnce(c, { timeoutMs: 5000 }))));
    } finally {
      await patient.close();
    }
  });

  it('stops a runaway expression at ~50 ms with TimeoutError, the event loop free throughout, and goes on serving', async () => {
    const before = runner.stats().workersReplaced;
    let last = performance.now();
    let maxGap = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
    }, 2);
    const t0 = performance.now();
    const r = await runner.run({ target: VALIDATIONS, expression: RUNAWAY, input: BIG });
    const wall = performance.now() - t0;
    clearInterval(tick);

    expect(r).toMatchObject({ status: 'failure', errorType: 'TimeoutError', output: null, errorMessage: expect.stringMatching(/^the run was stopped after [0-9.]+ ms; the limit is 50 ms$/) });
    expect(r.durationMs).toBeGreaterThanOrEqual(50);
    expect(wall).toBeGreaterThanOrEqual(50);
    // The margins are for a shared two-core machine; the expression itself would run for seconds
    // (8 million steps; see the next test), and the event loop never waited for it.
    expect(r.durationMs).toBeLessThan(120);
    expect(wall).toBeLessThan(200);
    expect(maxGap).toBeLessThan(80);

    // The worker was terminated; runs go on while piscina replaces it.
    const next: RunResult[] = [];
    for (let i = 0; i < 20; i++) next.push(await runner.run({ target: VALIDATIONS, expression: `{"operations": input.n > ${i}.0 ? [] : []}`, input: { n: i } }));
    expect(next.filter((x) => x.status !== 'success')).toEqual([]);
    expect(runner.stats().workersReplaced).toBe(before + 1);
    expect(runner.stats().timeouts).toBeGreaterThanOrEqual(1);
  });

  it('the runaway really runs away: given a second, it is still going when stopped', async () => {
    const patient = createFunctionRunner({ threads: 1, timeoutMs: 1000 });
    try {
      const r = await patient.run({ target: VALIDATIONS, expression: RUNAWAY, input: BIG });
      expect(r).toMatchObject({ errorType: 'TimeoutError', errorMessage: expect.stringMatching(/limit is 1000 ms/) });
    } finally {
      await patient.close();
    }
  });

  it('a saturated pool fails runs at once with TimeoutError, never an exception; a run waits at most maxWaitMs', async () => {
    // One task per worker: what waits, waits in the queue.
    const small = createFunctionRunner({ threads: 1, maxQueue: 1, timeoutMs: 300, maxWaitMs: 100 });
    try {
      await small.ready();
      const runaway = small.run({ target: VALIDATIONS, expression: RUNAWAY, input: BIG });
      await new Promise((r) => setTimeout(r, 20)); // the runaway holds the only worker
      const queued = small.run({ target: VALIDATIONS, expression: '{"operations": []}', input: {} });
      await nextTurn(); // queued alone (asks of one turn are sent together)
      // At once: in the turn its ask is sent in, before anything scheduled after it (a timer
      // would come later), rather than by a wall-clock margin a loaded machine can miss.
      const refusal = small.run({ target: VALIDATIONS, expression: '{"operations": []}', input: {} });
      const refused = await Promise.race([refusal, nextTurn().then(() => nextTurn()).then(() => 'still waiting' as const)]);
      expect(refused).toMatchObject({ status: 'failure', errorType: 'TimeoutError', errorMessage: expect.stringMatching(/^not run: the function pool is saturated/) });

      expect(await queued).toMatchObject({ errorType: 'TimeoutError', errorMessage: 'not run: no worker was free within 100 ms (the function pool is saturated)' });
      expect(await runaway).toMatchObject({ errorType: 'TimeoutError', errorMessage: expect.stringMatching(/limit is 300 ms/) });
      expect(small.stats()).toMatchObject({ saturated: 2, timeouts: 1, busy: 0, waiting: 0 });
      // Once the replacement worker is up, the pool serves again.
      await expect.poll(async () => (await small.run({ target: VALIDATIONS, expression: '{"operations": []}', input: {} })).status, { timeout: 10_000, interval: 50 }).toBe('success');
    } finally {
      await small.close();
    }
  });

  it('an expression that exhausts its worker\'s heap fails with RuntimeError; the pool replaces the worker', async () => {
    const tight = createFunctionRunner({ threads: 1, heapMb: 32, timeoutMs: 20_000 });
    try {
      await tight.ready();
      const r = await tight.run({
        target: VALIDATIONS,
        expression: 'input.big.map(a, input.big.map(b, input.big.map(c, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" + string(a + b + c))))',
        input: BIG,
      });
      expect(r).toMatchObject({ status: 'failure', errorType: 'RuntimeError', errorMessage: 'the run exceeded the memory limit and was stopped' });
      await expect.poll(async () => (await tight.run({ target: VALIDATIONS, expression: '{"operations": []}', input: {} })).status, { timeout: 10_000, interval: 50 }).toBe('success');
    } finally {
      await tight.close();
    }
  });

  it('runAll: a target\'s runs as one task, each result as its own run gives, in order', async () => {
    const shared = JSON.stringify(checkoutInput);
    const cases = [
      { target: DELIVERY, expression: '{"operations": input.deliveryOptions.map(o, {"hide": {"handle": o.handle}})}', input: checkoutInput, inputJson: shared },
      { target: VALIDATIONS, expression: '1 / 0', input: {} },
      { target: DELIVERY, expression: '{"operations": input.deliveryOptions.map(o, {"rename": {"handle": o.handle, "title": o.title + "!"}})}', input: checkoutInput, inputJson: shared },
      { target: VALIDATIONS, expression: '{"operations": []}', input: { s: 'x'.repeat(MAX_INPUT_BYTES) } },
      { target: DISCOUNTS, expression: '{"operations": [{"orderDiscountAdd": {"message": "m", "value": {"percentage": configuration.p}}}]}', input: {}, configuration: { p: 15 } },
    ];
    const patient = createFunctionRunner({ threads: 1, timeoutMs: 5000, maxWaitMs: 20_000 });
    try {
      const results = await patient.runAll(cases);
      expect(results.map((r) => r.errorType)).toEqual([null, 'RuntimeError', null, 'InputSizeLimitExceededError', null]);
      expect(results.map(strip)).toEqual(cases.map((c) => strip(evaluateOnce(c, { timeoutMs: 5000 }))));
      expect(patient.stats()).toMatchObject({ runs: 4, timeouts: 0, workersReplaced: 0 });
      expect(await patient.runAll([])).toEqual([]);
    } finally {
      await patient.close();
    }
  });

  it('asks of one turn, from several callers, go as one task; each caller gets its own results, as its own run gives', async () => {
    const pool = createFunctionRunner({ threads: 1, timeoutMs: 5000, maxWaitMs: 20_000 });
    try {
      await pool.ready();
      const ask = (n: number) => [
        { target: VALIDATIONS, expression: `{"operations": [{"validationAdd": {"errors": [{"message": "caller " + string(input.n), "target": "cart"}]}}]}`, input: { n } },
        { target: DISCOUNTS, expression: '{"operations": [{"orderDiscountAdd": {"message": "m", "value": {"percentage": configuration.p}}}]}', input: {}, configuration: { p: n + 1 } },
      ];
      // 20 callers of two runs: tasks of at most 32 runs (16 callers), whole callers each.
      const asked = Array.from({ length: 20 }, (_, n) => pool.runAll(ask(n)));
      await nextTurn();
      expect(pool.stats()).toMatchObject({ busy: 1, waiting: 8 });
      const results = await Promise.all(asked);
      results.forEach((r, n) => expect(r.map(strip)).toEqual(ask(n).map((c) => strip(evaluateOnce(c, { timeoutMs: 5000 })))));
      expect(pool.stats()).toMatchObject({ runs: 40, timeouts: 0, busy: 0, waiting: 0 });
    } finally {
      await pool.close();
    }
  });

  it("a runaway among one turn's asks fails its caller's run alone; the other callers' runs succeed", async () => {
    const pool = createFunctionRunner({ threads: 2, timeoutMs: 1000, maxWaitMs: 20_000 });
    try {
      await pool.ready();
      const ok = (n: number) => ({ target: VALIDATIONS, expression: `{"operations": input.n > ${n}.0 ? [] : []}`, input: { n } });
      const [first, runaway, last] = await Promise.all([
        pool.runAll([ok(1), ok(2)]),
        pool.runAll([ok(3), { target: VALIDATIONS, expression: RUNAWAY, input: BIG }]),
        pool.runAll([ok(4)]),
      ]);
      expect(first.map((r) => r.status)).toEqual(['success', 'success']);
      expect(runaway.map((r) => r.errorType)).toEqual([null, 'TimeoutError']);
      expect(last.map((r) => r.status)).toEqual(['success']);
      expect(pool.stats()).toMatchObject({ runs: 5, timeouts: 1, workersReplaced: 1 });
    } finally {
      await pool.close();
    }
  });

  it('runAll: a runaway among a task\'s runs alone fails at its own deadline; the others, before and after it, succeed', async () => {
    // Two workers and a spare, as in production: the others are sent again to a worker still
    // standing. The wait allowed is long: on a loaded machine a queued run may wait past 50 ms.
    // A second's limit: the runaway (seconds of work) still overruns it, and a loaded machine does
    // not push the small runs past it.
    const one = createFunctionRunner({ threads: 2, timeoutMs: 1000, maxWaitMs: 20_000 });
    try {
      await one.ready();
      const ok = (n: number) => ({ target: VALIDATIONS, expression: `{"operations": input.n > ${n}.0 ? [] : []}`, input: { n } });
      const results = await one.runAll([ok(1), ok(2), { target: VALIDATIONS, expression: RUNAWAY, input: BIG }, ok(3)]);
      expect(results.map((r) => r.errorType)).toEqual([null, null, 'TimeoutError', null]);
      expect(results[2]).toMatchObject({ errorMessage: expect.stringMatching(/^the run was stopped after [0-9.]+ ms; the limit is 1000 ms$/) });
      expect(results[2].durationMs).toBeGreaterThanOrEqual(1000);
      expect(one.stats()).toMatchObject({ runs: 4, timeouts: 1, workersReplaced: 1, busy: 0, waiting: 0 });
    } finally {
      await one.close();
    }
  });

  it('runAll: an expression that exhausts the heap fails alone; its task\'s other run succeeds', async () => {
    const tight = createFunctionRunner({ threads: 1, heapMb: 32, timeoutMs: 20_000 });
    try {
      await tight.ready();
      const [hog, fine] = await tight.runAll([
        { target: VALIDATIONS, expression: 'input.big.map(a, input.big.map(b, input.big.map(c, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" + string(a + b + c))))', input: BIG },
        { target: VALIDATIONS, expression: '{"operations": []}', input: {} },
      ]);
      expect(hog).toMatchObject({ status: 'failure', errorType: 'RuntimeError', errorMessage: 'the run exceeded the memory limit and was stopped' });
      expect(fine).toMatchObject({ status: 'success', output: { operations: [] } });
    } finally {
      await tight.close();
    }
  });

  it('runAll: the queue bound counts runs; a task that does not fit fails whole, at once', async () => {
    const small = createFunctionRunner({ threads: 1, maxQueue: 2, timeoutMs: 300, maxWaitMs: 100 });
    try {
      await small.ready();
      const runaway = small.run({ target: VALIDATIONS, expression: RUNAWAY, input: BIG });
      await new Promise((r) => setTimeout(r, 20));
      const noop = { target: VALIDATIONS, expression: '{"operations": []}', input: {} };
      const refused = await small.runAll([noop, noop, noop]);
      expect(refused.map((r) => r.errorMessage)).toEqual(Array(3).fill(expect.stringMatching(/^not run: the function pool is saturated \(1 running, 0 waiting\)$/)));
      const queued = small.runAll([noop, noop]);
      await nextTurn(); // asks of one turn are sent together, at its end
      expect(small.stats()).toMatchObject({ waiting: 2 });
      expect((await queued).map((r) => r.errorType)).toEqual(['TimeoutError', 'TimeoutError']);
      await runaway;
      expect(small.stats()).toMatchObject({ saturated: 5, timeouts: 1, busy: 0, waiting: 0 });
    } finally {
      await small.close();
    }
  });

  it('a spare worker stands in at once for one stopped: the pool never drops to no worker while the replacement loads', async () => {
    // Waits long enough for a replacement to load on a loaded machine (seconds, under two test suites).
    const withSpare = createFunctionRunner({ threads: 1, maxWaitMs: 20_000 });
    const without = createFunctionRunner({ threads: 1, maxWaitMs: 20_000, spareThreads: 0 });
    try {
      await Promise.all([withSpare.ready(), without.ready()]);
      expect(withSpare.stats()).toMatchObject({ threads: 1, loaded: 2 });
      expect(without.stats()).toMatchObject({ threads: 1, loaded: 1 });
      for (const pool of [withSpare, without]) {
        const runaway = pool.run({ target: VALIDATIONS, expression: RUNAWAY, input: BIG });
        await nextTurn();
        // One thread's worth at a time: this one (asked in a later turn, so a task of its own) waits in the queue.
        const queued = pool.run({ target: VALIDATIONS, expression: '{"operations": []}', input: {} });
        await nextTurn();
        expect(pool.stats()).toMatchObject({ busy: 1, waiting: 1 });
        expect(await runaway).toMatchObject({ errorType: 'TimeoutError' });
        // Right after the stop (a worker takes tens of ms and more to load): the spare is there;
        // without one, no worker is, and the queued run waits for the replacement.
        expect(pool.stats().loaded).toBe(pool === withSpare ? 1 : 0);
        expect(await queued).toMatchObject({ status: 'success' });
      }
      expect(withSpare.stats().workersReplaced).toBe(1);
      expect(without.stats().workersReplaced).toBe(1);
    } finally {
      await Promise.all([withSpare.close(), without.close()]);
    }
  });

  it('a spare is held back: `threads` tasks at a time, whatever the workers loaded', async () => {
    const pool = createFunctionRunner({ threads: 1, maxWaitMs: 20_000, timeoutMs: 20_000 });
    try {
      await pool.ready();
      // A first run of some length, then three asked each in a turn of its own: three tasks that wait.
      const runs = [pool.run({ target: VALIDATIONS, expression: SLOW, input: BIG })];
      for (let n = 0; n < 3; n++) {
        await nextTurn();
        runs.push(pool.run({ target: VALIDATIONS, expression: '{"operations": []}', input: { n } }));
      }
      await nextTurn();
      expect(pool.stats()).toMatchObject({ loaded: 2, busy: 1, waiting: 3 });
      expect((await Promise.all(runs)).map((r) => r.status)).toEqual(['failure', 'success', 'success', 'success']);
    } finally {
      await pool.close();
    }
  });

  it('after close, a run fails instead of throwing', async () => {
    const r = createFunctionRunner({ threads: 1 });
    await r.close();
    expect(await r.run({ target: VALIDATIONS, expression: '{"operations": []}', input: {} })).toMatchObject({ status: 'failure', errorType: 'RuntimeError', errorMessage: 'the function runner is closed' });
  });
});

describe('issue 13 item 6: the runtime module stands alone', () => {
  it('imports only its own files, node built-ins and declared npm packages', () => {
    const dir = fileURLToPath(new URL('../src/functions/runtime/', import.meta.url));
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
    const files = readdirSync(dir).filter((f) => /\.(ts|mjs|js)$/.test(f));
    expect(files.length).toBeGreaterThan(3);
    const bad: string[] = [];
    for (const file of files) {
      const source = readFileSync(dir + file, 'utf8');
      const specifiers = [...source.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)]
        .map((m) => m[1] ?? m[2] ?? m[3]);
      for (const s of specifiers) {
        const own = /^\.\/[^/]+$/.test(s);
        const builtin = s.startsWith('node:');
        const pkgName = s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0];
        const declared = !s.startsWith('.') && pkgName in pkg.dependencies;
        if (!own && !builtin && !declared) bad.push(`${file}: ${s}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
