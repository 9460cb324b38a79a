// Request validation from the route's schemas (issue 11 section 1), and the one place where a
// failed check becomes the per-field messages of C5.1's errors body (and the sentence of an
// envelope error), in the house's words ("can't be blank", "must be a string") rather than Ajv's.
//
// Two validators, by the part of the request:
// - the query string and path parameters arrive as text, so they are coerced ("2" -> 2) and take
//   their schema defaults;
// - a JSON body is checked exactly as sent: `{ "title": 5 }` is not a string, and nothing is added
//   to it (a reader can still tell a field that was sent from one that was not). Unknown keys are
//   kept and ignored, never rejected (C5.6): no body schema says `additionalProperties: false`.
//
// A field's schema may say what to answer when it fails, where the default words below would not
// fit: `'x-error': 'must be ...'` (an OpenAPI extension, so the reference shows it too) for every failure of that field and of anything inside it, or
// `'x-error': { maxLength: 'is too long (maximum is 255 characters)' }` for named keywords only.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { AppError, badRequest } from './errors.js';
import { childPath, pointerPath } from './field-path.js';
import { BLANK_IS_ABSENT } from './schemas.js';

// ajv-formats is CommonJS: its default export is the function under `default` when imported from ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: coerce,
    removeAdditional: false,
    allErrors: !coerce, // a body reports every bad field at once; a query string its first
    verbose: true, // errors carry their schema, for `x-error`
    strict: false, // TypeBox's own keywords and our annotations are not Ajv's
  });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'x-error', schemaType: ['string', 'object'] });
  return ajv;
}

const textAjv = makeAjv(true);
const bodyAjv = makeAjv(false);

/** Fastify's validator compiler: bodies exactly, text parts coerced. */
export const compileValidator: FastifySchemaCompiler<FastifySchema> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  const validate = ajv.compile(schema as object);
  const blankFilters = httpPart === 'querystring' ? (schema as Schema)[BLANK_IS_ABSENT] as string[] | undefined : undefined;
  const check = (data: unknown) => {
    if (blankFilters) dropBlankFilters(data as Record<string, unknown>, blankFilters);
    const ok = validate(data);
    if (!ok && validate.errors) {
      const errors = validate.errors.map((error) => claimedBy(schema as Schema, error));
      check.errors = httpPart === 'querystring' ? errors.map((error) => repeatedParameter(schema as Schema, data, error)) : errors;
    }
    return ok;
  };
  check.errors = null as ErrorObject[] | null;
  return check;
};

type Schema = Record<string, any>;

const REPEATED: Schema = { 'x-error': 'is given more than once' };

/**
 * A query parameter sent twice (`?status=paid&status=failed`) arrives as an array: where its schema
 * takes one value, the failure says so ("status is given more than once") rather than that the
 * value "must be a string", which an app developer reads as a complaint about the value.
 */
function repeatedParameter(schema: Schema, data: unknown, error: ErrorObject): ErrorObject {
  const key = fieldOf(error);
  const value = key && !key.includes('.') && !key.includes('[') ? (data as Record<string, unknown>)[key] : undefined;
  if (!Array.isArray(value) || takesArray(schema.properties?.[key])) return error;
  return { ...error, keyword: 'x-error', params: {}, parentSchema: REPEATED };
}

const takesArray = (s: Schema | undefined): boolean =>
  !!s && (s.type === 'array' || [s.anyOf, s.oneOf].some((branches) => Array.isArray(branches) && branches.some(takesArray)));

/** A list filter sent blank is no filter (schemas.ts `pagedQuery`): left out of the query the handler sees. */
function dropBlankFilters(query: Record<string, unknown>, filters: string[]): void {
  for (const key of filters) {
    const value = query[key];
    if (typeof value === 'string' && value.trim() === '') delete query[key];
  }
}

/**
 * A schema's `x-error` speaks for everything beneath it: a failure inside `tags` (say
 * `tags.0` is not a string) is reported on `tags` with its words. The outermost such schema on the
 * failure's path wins. Found by walking the failure's schema path from the root.
 */
function claimedBy(root: Schema, error: ErrorObject): ErrorObject {
  const steps = error.schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const at = error.instancePath.split('/').slice(1);
  let node: Schema | undefined = root;
  let depth = 0;
  for (let i = 0; i < steps.length && node; i++) {
    if (typeof node['x-error'] === 'string' && node !== error.parentSchema) {
      return { ...error, keyword: 'x-error', instancePath: at.slice(0, depth).map((s) => `/${s}`).join(''), parentSchema: node };
    }
    const step = steps[i];
    if (step === 'properties' || step === 'patternProperties') {
      node = node[step]?.[steps[++i]];
      depth++;
    } else if (step === 'items' || step === 'additionalProperties') {
      node = node[step];
      depth++;
    } else if (step === 'anyOf' || step === 'oneOf' || step === 'allOf') {
      node = node[step]?.[Number(steps[++i])];
    } else break; // the failing keyword itself
  }
  return error;
}

/** Where a failed value sits, as the errors body names fields: `line_items[0].quantity` (field-path.ts). */
function fieldOf(error: ErrorObject): string {
  const path = pointerPath(error.instancePath);
  if (error.keyword === 'required') return childPath(path, String((error.params as { missingProperty: string }).missingProperty));
  return path;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'must be a string',
  boolean: 'must be true or false',
  integer: 'must be a whole number',
  number: 'must be a number',
  array: 'must be an array',
  object: 'must be an object',
  null: 'must be null',
};

function typeWords(type: unknown): string {
  const types = ([] as unknown[]).concat(type).filter((t) => t !== 'null');
  const words = types.map((t) => TYPE_WORDS[String(t)]?.replace(/^must be /, '') ?? String(t));
  // "null" goes unsaid: where null is allowed it means "absent" or "clear", never a value to aim for.
  return words.length ? `must be ${words.join(' or ')}` : 'must be null';
}

type Words = string | Record<string, string> | undefined;

/** The failed schema's own words for this failure, if it has any. */
function ownWords(error: ErrorObject): string | undefined {
  const own = (error.parentSchema as { 'x-error'?: Words } | undefined)?.['x-error'];
  return typeof own === 'object' ? own[error.keyword] : own;
}

/** The house's words for one failed keyword. */
function wordsFor(error: ErrorObject): string {
  const own = ownWords(error);
  if (own) return own;
  const p = error.params as Record<string, any>;
  switch (error.keyword) {
    case 'required': return "can't be blank";
    case 'type': return typeWords(p.type);
    case 'maxLength': return `is too long (maximum ${p.limit} characters)`;
    case 'minLength': return p.limit === 1 ? "can't be blank" : `is too short (minimum ${p.limit} characters)`;
    case 'minimum': return `must be greater than or equal to ${p.limit}`;
    case 'maximum': return `must be less than or equal to ${p.limit}`;
    case 'exclusiveMinimum': return `must be greater than ${p.limit}`;
    case 'exclusiveMaximum': return `must be less than ${p.limit}`;
    case 'enum': return `must be one of ${(p.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}`;
    case 'const': return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'maxItems': return `must have at most ${p.limit} items`;
    case 'minItems': return `must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`;
    case 'format': return p.format === 'date-time' ? 'must be an ISO 8601 date-time' : `must be a valid ${p.format}`;
    default: return 'is invalid';
  }
}

/**
 * Ajv's errors as the errors body's fields. Several errors on one field (the branches of an
 * `anyOf`, say) give one message: the field's own `x-error` when its schema has one, else
 * the first.
 */
export function validationFields(errors: readonly ErrorObject[]): Record<string, string[]> {
  const byField = new Map<string, ErrorObject[]>();
  for (const error of errors) {
    const field = fieldOf(error);
    byField.set(field, [...(byField.get(field) ?? []), error]);
  }
  const fields: Record<string, string[]> = {};
  for (const [field, list] of byField) {
    // An anyOf reports each failed branch, then itself: the anyOf is the field's own verdict.
    const verdict = list.find((e) => ownWords(e)) ?? list.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf') ?? list[0];
    fields[field || 'base'] = [verdict.keyword === 'anyOf' || verdict.keyword === 'oneOf' ? wordsForUnion(verdict, list) : wordsFor(verdict)];
  }
  return fields;
}

/** A value that matched no branch of a union: "must be a string or null", from the branches' types. */
function wordsForUnion(verdict: ErrorObject, list: ErrorObject[]): string {
  const own = ownWords(verdict);
  if (own) return own;
  const types = list.filter((e) => e.keyword === 'type').flatMap((e) => ([] as unknown[]).concat((e.params as { type: unknown }).type));
  return types.length ? typeWords([...new Set(types)]) : 'is invalid';
}

/**
 * A failed validation as the AppError the error handler renders: per-field messages for the
 * errors body, `{field} {message}` for the envelope. A body that is not an object at all reads as
 * the readers have always said it.
 */
export function validationError(errors: readonly ErrorObject[], part: string | undefined): AppError {
  const fields = validationFields(errors);
  const entries = Object.entries(fields);
  if (part === 'body' && entries.length === 1 && entries[0][0] === 'base' && errors.some((e) => e.instancePath === '' && e.keyword === 'type')) {
    return badRequest('The request body must be a JSON object');
  }
  const [field, messages] = entries[0] ?? ['base', ['is invalid']];
  return badRequest(field === 'base' ? messages[0] : `${field} ${messages[0]}`, fields);
}
