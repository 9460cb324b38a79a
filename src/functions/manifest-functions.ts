// `extensions.functions` of the app manifest (C11.1), checked when an app is created or updated:
// each function's handle, target, expression (parsed and checked by the function runtime, the
// very code that later runs it) and configuration. A problem is a 400 that names the function.
import { badRequest } from '../http/errors.js';
import { slugify } from '../slug.js';
import { declarationProblems, type FunctionTarget } from './runtime/index.js';
import type { DeclaredFunction } from './functions.repo.js';

export function readManifestFunctions(value: unknown): DeclaredFunction[] {
  if (!Array.isArray(value)) throw badRequest('extensions.functions must be an array');
  const seen = new Set<string>();
  return value.map((entry: unknown, i) => {
    const at = `extensions.functions[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw badRequest(`${at} must be an object`);
    const f = entry as Record<string, unknown>;
    const handle = f.handle;
    if (typeof handle !== 'string' || !handle || slugify(handle) !== handle) throw badRequest(`${at}.handle must be lowercase letters, digits and -`);
    const named = `${at} (${handle})`;
    if (seen.has(handle)) throw badRequest(`${named}: handle is used by another function of this app`);
    seen.add(handle);
    if (f.title !== undefined && f.title !== null && typeof f.title !== 'string') throw badRequest(`${named}: title must be a string`);
    // Target, expression and configuration: the runtime's own checks, the code that will run it.
    const problems = declarationProblems({ target: f.target, expression: f.expression, configuration: f.configuration });
    if (problems.length) throw badRequest(`${named}: ${problems.join('; ')}`);
    return {
      handle,
      target: f.target as FunctionTarget,
      title: typeof f.title === 'string' ? f.title : null,
      expression: f.expression as string,
      configuration: (f.configuration ?? {}) as Record<string, unknown>,
    };
  });
}
