// `extensions.functions` of the app manifest (C11.1), checked when an app is created or updated:
// each function's handle, target, expression (parsed and checked by the function runtime, the
// very code that later runs it) and configuration. A problem is a 400 that names the function.
import { badRequest } from '../http/errors.js';
import { MAX_SLUG_CHARS, slugify } from '../slug.js';
import { longerThan } from '../text.js';
import { declarationsProblems, TARGETS, type FunctionTarget } from './runtime/index.js';
import { checkDeclaredExpressions } from './developer-runs.js';
import { MAX_ACTIVE_PER_TARGET, type DeclaredFunction } from './functions.repo.js';

/**
 * Most functions of one app: as many as could all be active on one store (C11.2: 25 per target,
 * four targets). Each is a row per installing store and a line of the merchant's list.
 */
export const MAX_MANIFEST_FUNCTIONS = MAX_ACTIVE_PER_TARGET * TARGETS.length;
/** Longest handle: a slug, as an app's handle (src/slug.ts). It is part of the developer's run URLs. */
export const MAX_FUNCTION_HANDLE_CHARS = MAX_SLUG_CHARS;
/**
 * The handle the developer's run routes read as "every function of the app" (C11.6:
 * `.../functions/all/logs`): a function of that handle could never have its own logs or runs read.
 */
export const ALL_FUNCTIONS = 'all';
/** Longest title: the platform's display-text limit (an app's name, a product's title); shown to merchants. */
export const MAX_FUNCTION_TITLE_CHARS = 255;

/**
 * The manifest's functions, checked; the first problem, in the functions' order, is a 400. The
 * expressions are compiled off the event loop (developer-runs.ts `checkDeclaredExpressions`; C11.1
 * allows 100 functions of 10,000 characters, seconds of parsing), all in one go, after the checks
 * that cost nothing; the 400 is the one the functions' order gives, as when each was checked in turn.
 */
export async function readManifestFunctions(value: unknown, check = checkDeclaredExpressions): Promise<DeclaredFunction[]> {
  if (!Array.isArray(value)) throw badRequest('extensions.functions must be an array');
  if (value.length > MAX_MANIFEST_FUNCTIONS) throw badRequest(`extensions.functions must have at most ${MAX_MANIFEST_FUNCTIONS} functions`);
  const seen = new Set<string>();
  const read: { named: string; f: Record<string, unknown>; handle: string }[] = [];
  // The first function whose handle or title is wrong: the functions before it are compiled, and
  // their problems come first; its own problem comes before its expression's.
  let wrong: unknown = null;
  for (const [i, entry] of (value as unknown[]).entries()) {
    try {
      read.push(readEntry(entry, i, seen));
    } catch (err) {
      wrong = err;
      break;
    }
  }
  const problems = await declarationsProblems(read.map(({ f }) => ({ target: f.target, expression: f.expression, configuration: f.configuration })), check);
  problems.forEach((p, i) => {
    if (p.length) throw badRequest(`${read[i].named}: ${p.join('; ')}`);
  });
  if (wrong) throw wrong;
  return read.map(({ f, handle }) => ({
    handle,
    target: f.target as FunctionTarget,
    title: typeof f.title === 'string' ? f.title : null,
    expression: f.expression as string,
    configuration: (f.configuration ?? {}) as Record<string, unknown>,
  }));
}

/** One function's handle and title (the checks that cost nothing); throws its 400. */
function readEntry(entry: unknown, i: number, seen: Set<string>) {
  const at = `extensions.functions[${i}]`;
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw badRequest(`${at} must be an object`);
  const f = entry as Record<string, unknown>;
  const handle = f.handle;
  // Checked before the slug rule, which cuts a slug at this length and would call it "not a slug".
  if (typeof handle === 'string' && longerThan(handle, MAX_FUNCTION_HANDLE_CHARS)) throw badRequest(`${at}.handle must be at most ${MAX_FUNCTION_HANDLE_CHARS} characters`);
  if (typeof handle !== 'string' || !handle || slugify(handle) !== handle) throw badRequest(`${at}.handle must be lowercase letters, digits and -`);
  const named = `${at} (${handle})`;
  if (handle === ALL_FUNCTIONS) throw badRequest(`${named}: handle "${ALL_FUNCTIONS}" is reserved (the run routes read it as every function of the app)`);
  if (seen.has(handle)) throw badRequest(`${named}: handle is used by another function of this app`);
  seen.add(handle);
  if (f.title !== undefined && f.title !== null && typeof f.title !== 'string') throw badRequest(`${named}: title must be a string`);
  if (typeof f.title === 'string' && longerThan(f.title, MAX_FUNCTION_TITLE_CHARS)) throw badRequest(`${named}: title must be at most ${MAX_FUNCTION_TITLE_CHARS} characters`);
  return { named, f, handle };
}
