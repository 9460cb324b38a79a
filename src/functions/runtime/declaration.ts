// C11.1's checks of one declared function, for app create and update: each problem is a sentence
// the caller puts after the function's handle in its 400 ("function "volume": expression does not
// parse: ..."). The handle itself (a slug, unique within the app) is the manifest's to check.
import { compileFunction, configurationProblem } from './cel.js';
import { TARGETS, isTarget } from './targets.js';

export function declarationProblems(fn: { target: unknown; expression: unknown; configuration?: unknown }): string[] {
  const problems: string[] = [];
  if (!isTarget(fn.target)) problems.push(`target must be one of ${TARGETS.join(', ')}`);
  const compiled = compileFunction(fn.expression);
  if (!compiled.ok) problems.push(compiled.problem);
  const configuration = configurationProblem(fn.configuration);
  if (configuration) problems.push(configuration);
  return problems;
}
