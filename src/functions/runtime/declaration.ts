// C11.1's checks of one declared function, for app create and update: each problem is a sentence
// the caller puts after the function's handle in its 400 ("function "volume": expression does not
// parse: ..."). The handle itself (a slug, unique within the app) is the manifest's to check.
import { compileFunction, configurationProblem } from './cel.js';
import { TARGETS, isTarget } from './targets.js';

type Declared = { target: unknown; expression: unknown; configuration?: unknown };

/** In this thread (the app SDK's local check, the tests): compiling can take hundreds of ms. */
export function declarationProblems(fn: Declared): string[] {
  const compiled = compileFunction(fn.expression);
  return problemsOf(fn, compiled.ok ? null : compiled.problem);
}

/**
 * The same checks of several functions, the expressions compiled off this thread by `check` (a
 * runner's `checkExpressions`): the service's, whose event loop must not parse 100 expressions of
 * 10,000 characters (seconds of CPU, every other request frozen meanwhile).
 */
export async function declarationsProblems(fns: readonly Declared[], check: (expressions: readonly unknown[]) => Promise<(string | null)[]>): Promise<string[][]> {
  const expressionProblems = fns.length ? await check(fns.map((fn) => fn.expression)) : [];
  return fns.map((fn, i) => problemsOf(fn, expressionProblems[i]));
}

function problemsOf(fn: Declared, expressionProblem: string | null): string[] {
  const problems: string[] = [];
  if (!isTarget(fn.target)) problems.push(`target must be one of ${TARGETS.join(', ')}`);
  if (expressionProblem) problems.push(expressionProblem);
  const configuration = configurationProblem(fn.configuration);
  if (configuration) problems.push(configuration);
  return problems;
}
