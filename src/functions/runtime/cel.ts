// CEL through @bufbuild/cel (cel-es, which runs the cel-spec conformance suite): parse, a static
// check of names, planning, and the conversions between JSON and CEL values.
//
// @bufbuild/cel does not export its type checker (and notes it is partial), and a function's
// variables are dynamic JSON anyway, so the check here is of names: every free identifier is a
// variable (`input`, `configuration`) or a type name, and every function exists. Type errors
// (`input.x + 1` where `input.x` is a JSON number, a double) surface when the function runs, as
// RuntimeError with CEL's message.
import {
  CelScalar, celEnv, isCelError, isCelList, isCelMap, isCelUint, parse, plan,
  type CelResult,
} from '@bufbuild/cel';
import { MAX_CONFIGURATION_BYTES, MAX_EXPRESSION_CHARS, codePoints, utf8Bytes } from './limits.js';

export { isCelError };

export const VARIABLES = ['input', 'configuration'] as const;

const env = celEnv({ variables: { input: CelScalar.DYN, configuration: CelScalar.DYN } });

/** Type names CEL lets an expression mention (`type(x) == double`). */
const TYPE_NAMES = new Set(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type']);
/** Operators the planner evaluates itself rather than through the function table. */
const SPECIAL_FUNCTIONS = new Set(['_&&_', '_||_', '_?_:_', '_[_]', '@not_strictly_false']);

export type Evaluate = (bindings: { input: unknown; configuration: unknown }) => CelResult;

export type CompileResult =
  | { ok: true; evaluate: Evaluate }
  | { ok: false; problem: string };

/**
 * Parse and check an expression (C11.1). On failure, `problem` is a sentence a caller can put in a
 * 400 after the function's handle: "expression does not parse: <input>:1:3: ...".
 */
export function compileFunction(expression: unknown): CompileResult {
  const shape = expressionShapeProblem(expression);
  if (shape) return { ok: false, problem: shape };
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(expression as string);
  } catch (err) {
    return { ok: false, problem: `expression does not parse: ${messageOf(err)}` };
  }
  const problem = checkNames(parsed.expr);
  if (problem) return { ok: false, problem };
  try {
    const run = plan(env, parsed);
    return { ok: true, evaluate: run as Evaluate };
  } catch (err) {
    return { ok: false, problem: `expression does not compile: ${messageOf(err)}` };
  }
}

/**
 * The checks of an expression that cost nothing (a string, not blank, at most 10,000 characters):
 * made where it is given (the pool's `checkExpressions`), before any parsing, which is work for a
 * worker thread (a 10,000-character expression can take hundreds of ms).
 */
export function expressionShapeProblem(expression: unknown): string | null {
  if (typeof expression !== 'string') return 'expression must be a string';
  if (expression.trim() === '') return 'expression is empty';
  const chars = codePoints(expression);
  if (chars > MAX_EXPRESSION_CHARS) return `expression is too long (${chars} characters; the maximum is ${MAX_EXPRESSION_CHARS})`;
  return null;
}

/** C11.1: a configuration is a JSON object of at most 10 KB; null when it is acceptable. */
export function configurationProblem(configuration: unknown): string | null {
  if (configuration === undefined || configuration === null) return null;
  if (typeof configuration !== 'object' || Array.isArray(configuration)) return 'configuration must be a JSON object';
  let bytes: number;
  try {
    bytes = utf8Bytes(JSON.stringify(configuration));
  } catch {
    return 'configuration must be JSON';
  }
  if (bytes > MAX_CONFIGURATION_BYTES) {
    return `configuration is too large (${bytes} bytes; the maximum is ${MAX_CONFIGURATION_BYTES})`;
  }
  return null;
}

// ---- the static check of names ---------------------------------------------------------------

type Expr = ReturnType<typeof parse>['expr'];

function checkNames(root: Expr): string | null {
  // An explicit stack rather than recursion: a 10,000-character expression can nest deeply.
  const stack: { expr: Expr | undefined; scope: ReadonlySet<string> }[] = [{ expr: root, scope: new Set() }];
  while (stack.length > 0) {
    const { expr, scope } = stack.pop()!;
    if (!expr) continue;
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'identExpr': {
        const name = kind.value.name;
        if (scope.has(name) || (VARIABLES as readonly string[]).includes(name) || TYPE_NAMES.has(name)) break;
        return `expression uses an unknown variable "${name}" (the variables are input and configuration)`;
      }
      case 'selectExpr': {
        // google.protobuf.* are the well-known types' names, resolved by CEL itself.
        if (rootName(kind.value.operand) === 'google' && !scope.has('google')) break;
        stack.push({ expr: kind.value.operand, scope });
        break;
      }
      case 'callExpr': {
        const fn = kind.value.function;
        if (!SPECIAL_FUNCTIONS.has(fn) && env.funcs.find(fn) === undefined) {
          return `expression calls an unknown function "${fn}"`;
        }
        stack.push({ expr: kind.value.target, scope });
        for (const arg of kind.value.args) stack.push({ expr: arg, scope });
        break;
      }
      case 'listExpr':
        for (const el of kind.value.elements) stack.push({ expr: el, scope });
        break;
      case 'structExpr':
        for (const entry of kind.value.entries) {
          stack.push({ expr: entry.value, scope });
          if (entry.keyKind.case === 'mapKey') stack.push({ expr: entry.keyKind.value, scope });
        }
        break;
      case 'comprehensionExpr': {
        const c = kind.value;
        const withAccu = new Set(scope).add(c.accuVar);
        const inLoop = new Set(withAccu).add(c.iterVar);
        if (c.iterVar2) inLoop.add(c.iterVar2);
        stack.push({ expr: c.iterRange, scope }, { expr: c.accuInit, scope });
        stack.push({ expr: c.loopCondition, scope: inLoop }, { expr: c.loopStep, scope: inLoop });
        stack.push({ expr: c.result, scope: withAccu });
        break;
      }
      default:
        break;
    }
  }
  return null;
}

function rootName(expr: Expr | undefined): string | null {
  while (expr) {
    const kind = expr.exprKind;
    if (kind.case === 'identExpr') return kind.value.name;
    if (kind.case !== 'selectExpr') return null;
    expr = kind.value.operand;
  }
  return null;
}

// ---- CEL values back to JSON -----------------------------------------------------------------

export class NotJsonError extends Error {}

/**
 * A CEL result as plain JSON: maps with string keys become objects, lists arrays, ints and uints
 * numbers (when exact), doubles numbers (when finite), strings, bools and null themselves.
 * Anything else (bytes, timestamps, durations, types, messages) throws NotJsonError naming where.
 */
export function celToJson(value: unknown, path = 'output'): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new NotJsonError(`${path} is ${value}, which JSON cannot hold`);
    return value;
  }
  if (typeof value === 'bigint') return bigintToNumber(value, path);
  if (isCelUint(value)) return bigintToNumber(value.value, path);
  if (isCelList(value)) {
    const out: unknown[] = [];
    let i = 0;
    for (const item of value) out.push(celToJson(item, `${path}[${i++}]`));
    return out;
  }
  if (isCelMap(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of value) {
      if (typeof key !== 'string') throw new NotJsonError(`${path} has a key that is not a string (${String(isCelUint(key) ? key.value : key)})`);
      // defineProperty: a key such as "__proto__" is data, not the prototype.
      Object.defineProperty(out, key, { value: celToJson(item, `${path}.${key}`), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  if (isCelError(value)) throw value;
  throw new NotJsonError(`${path} is a ${describeValue(value)}, which is not JSON`);
}

function bigintToNumber(value: bigint, path: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new NotJsonError(`${path} is the integer ${value}, too large for JSON numbers`);
  return n;
}

function describeValue(value: unknown): string {
  if (value instanceof Uint8Array) return 'bytes value';
  const typeName = (value as { message?: { $typeName?: string } })?.message?.$typeName
    ?? (value as { desc?: { typeName?: string } })?.desc?.typeName;
  if (typeName) return `${typeName} value`;
  if ((value as { kind?: string })?.kind) return 'type value';
  return `${typeof value} value`;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
