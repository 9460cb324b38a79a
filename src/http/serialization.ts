// Responses are serialised through their route's schema (fast-json-stringify, compiled once per
// route and status): faster than JSON.stringify on the list pages, and what the reference says is
// what is sent. A compiled serialiser writes only the fields its schema declares and coerces
// values to the declared type (null to "" for a string), so a schema that is wrong would change a
// body silently. Under test (`checkResponses`), every serialised body is therefore compared with
// JSON.stringify of the same value, and a difference fails the request with a 500 naming the route,
// status and first differing path: the whole suite, with its exact-body tests, proves the schemas.
import fastJson from 'fast-json-stringify';
import type { FastifySchema, FastifySerializerCompiler } from 'fastify';

type Serialize = (data: unknown) => string;

export function serializerCompiler(options: { checkResponses: boolean }): FastifySerializerCompiler<FastifySchema> {
  return ({ schema, method, url, httpStatus }) => {
    const compiled = fastJson(schema as Parameters<typeof fastJson>[0]) as Serialize;
    if (!options.checkResponses) return compiled;
    return (data: unknown) => {
      const out = compiled(data);
      const difference = firstDifference(JSON.parse(out), JSON.parse(JSON.stringify(data) ?? 'null'), '');
      if (difference !== null) {
        const message = `The response schema of ${method} ${url} (${httpStatus}) changes the body at ${difference || '(root)'}`;
        // Printed as well as thrown: the 500 that follows is all a test sees of it.
        console.error(`${message}\n  serialised: ${out.slice(0, 2000)}\n  expected:   ${JSON.stringify(data)?.slice(0, 2000)}`);
        throw new Error(message);
      }
      return out;
    };
  };
}

/** The first path where two parsed JSON values differ, or null when they are equal. */
function firstDifference(a: unknown, b: unknown, path: string): string | null {
  if (a === b) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return path;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${path}.length`;
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const key of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
    if (!(key in ao) || !(key in bo)) return `${path}.${key}`;
    const d = firstDifference(ao[key], bo[key], `${path}.${key}`);
    if (d !== null) return d;
  }
  return null;
}
