// Fixture tests for functions (C11), with any test runner: a fixture is a target, an expression, an
// input, a configuration and what should come out; it runs on the platform's own runtime
// (`evaluateOnce`), so a passing fixture passes in production. A mismatch says where, path by path:
//
//   expectFunction({ target: 'cart.validations.generate.run', expression, input, expectOutput: { operations: [] } });
//   const outcomes = await runFixtures('functions/fixtures'); // every *.json in the folder
//
// A fixture file is JSON: { name?, target, expression | expressionFile (relative to the file),
// input, configuration?, expectOutput? | expectErrorType? }.
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { evaluateOnce, type FunctionErrorType, type RunResult } from './functions.js';

export interface FunctionFixture {
  name?: string;
  target: string;
  expression?: string;
  /** A file holding the expression (relative to the fixture file, or to the working directory for a fixture given in code). */
  expressionFile?: string;
  input: unknown;
  configuration?: unknown;
  /** The output a successful run must give (compared as JSON: key order aside, exactly). */
  expectOutput?: unknown;
  /** The run must fail with this error type instead. */
  expectErrorType?: FunctionErrorType;
  /**
   * The run's time limit: C11.4's 50 ms by default, as in production. A busy CI machine may give
   * more, so that a fixture about what a function outputs does not fail on how fast the machine is.
   */
  timeoutMs?: number;
}

export interface FixtureOutcome {
  name: string;
  pass: boolean;
  result: RunResult;
  /** What differs, one line per path (`$.operations[0].cartLinesDiscountsAdd...`); empty when it passes. */
  differences: string[];
  /** A readable account of the failure; null when it passes. */
  message: string | null;
}

export class FixtureMismatchError extends Error {
  constructor(readonly outcomes: FixtureOutcome[]) {
    super(outcomes.map((o) => o.message).join('\n\n'));
    this.name = 'FixtureMismatchError';
  }
}

const show = (v: unknown) => (v === undefined ? 'nothing' : JSON.stringify(v));
const key = (path: string, k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`);

/** Where `actual` differs from `expected` (JSON values), one line each. */
export function jsonDifferences(expected: unknown, actual: unknown, path = '$'): string[] {
  if (Object.is(expected, actual)) return [];
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const out: string[] = [];
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      if (i >= actual.length) out.push(`${path}[${i}]: expected ${show(expected[i])}, got nothing (array too short)`);
      else if (i >= expected.length) out.push(`${path}[${i}]: expected nothing, got ${show(actual[i])} (array too long)`);
      else out.push(...jsonDifferences(expected[i], actual[i], `${path}[${i}]`));
    }
    return out;
  }
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObject(expected) && isObject(actual)) {
    const out: string[] = [];
    for (const k of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
      if (!(k in actual)) out.push(`${key(path, k)}: expected ${show(expected[k])}, got nothing`);
      else if (!(k in expected)) out.push(`${key(path, k)}: expected nothing, got ${show(actual[k])}`);
      else out.push(...jsonDifferences(expected[k], actual[k], key(path, k)));
    }
    return out;
  }
  return [`${path}: expected ${show(expected)}, got ${show(actual)}`];
}

async function expressionOf(fixture: FunctionFixture, baseDir: string): Promise<string> {
  if (typeof fixture.expression === 'string') return fixture.expression;
  if (fixture.expressionFile) return readFile(resolve(baseDir, fixture.expressionFile), 'utf8');
  throw new Error(`fixture ${fixture.name ?? fixture.target}: give expression or expressionFile`);
}

function judge(fixture: FunctionFixture, expression: string): FixtureOutcome {
  const name = fixture.name ?? fixture.target;
  const result = evaluateOnce(
    { target: fixture.target, expression, input: fixture.input, configuration: fixture.configuration ?? {} },
    fixture.timeoutMs === undefined ? {} : { timeoutMs: fixture.timeoutMs },
  );
  let differences: string[];
  if (fixture.expectErrorType !== undefined) {
    differences = result.status === 'failure' && result.errorType === fixture.expectErrorType
      ? []
      : [`expected a failure with ${fixture.expectErrorType}, got ${result.status === 'success' ? `success with ${show(result.output)}` : `${result.errorType}: ${result.errorMessage}`}`];
  } else if (result.status !== 'success') {
    differences = [`expected success, got ${result.errorType}: ${result.errorMessage}`];
  } else {
    differences = 'expectOutput' in fixture ? jsonDifferences(fixture.expectOutput, result.output) : [];
  }
  const pass = differences.length === 0;
  return {
    name, pass, result, differences,
    message: pass ? null : `function fixture "${name}" (${fixture.target}) does not hold:\n${differences.map((d) => `  ${d}`).join('\n')}`,
  };
}

/** Runs one fixture given in code; its `expressionFile` is read relative to the working directory. */
export async function checkFunction(fixture: FunctionFixture): Promise<FixtureOutcome> {
  return judge(fixture, await expressionOf(fixture, process.cwd()));
}

/**
 * Runs one fixture with its expression given inline and throws a `FixtureMismatchError` (its
 * message lists every difference) when it does not hold; returns the run's result when it does.
 */
export function expectFunction(fixture: FunctionFixture & { expression: string }): RunResult {
  const outcome = judge(fixture, fixture.expression);
  if (!outcome.pass) throw new FixtureMismatchError([outcome]);
  return outcome.result;
}

/** Runs the fixtures of a folder (every `*.json`, in name order) or a list; never throws for a mismatch. */
export async function runFixtures(source: string | readonly FunctionFixture[]): Promise<FixtureOutcome[]> {
  if (typeof source !== 'string') return Promise.all(source.map((f) => checkFunction(f)));
  const files = (await readdir(source)).filter((f) => f.endsWith('.json')).sort();
  const outcomes: FixtureOutcome[] = [];
  for (const file of files) {
    const path = join(source, file);
    let fixture: FunctionFixture;
    try {
      fixture = JSON.parse(await readFile(path, 'utf8')) as FunctionFixture;
    } catch (err) {
      // A bare JSON.parse message names neither the file nor the folder's other fixtures.
      if (err instanceof SyntaxError) throw new Error(`fixture ${path} is not JSON: ${err.message}`);
      throw err;
    }
    fixture.name ??= basename(file, '.json');
    outcomes.push(judge(fixture, await expressionOf(fixture, dirname(path))));
  }
  return outcomes;
}

/** `runFixtures`, throwing a `FixtureMismatchError` that lists every fixture that does not hold. */
export async function assertFixtures(source: string | readonly FunctionFixture[]): Promise<FixtureOutcome[]> {
  const outcomes = await runFixtures(source);
  const failed = outcomes.filter((o) => !o.pass);
  if (failed.length) throw new FixtureMismatchError(failed);
  if (outcomes.length === 0) throw new Error('no function fixtures found');
  return outcomes;
}
