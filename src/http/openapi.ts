// The API reference as a product (issue 11 section 2): every operation gets an operationId and the
// error responses its surface really gives, in the body shape its route declares (C5.1), written
// here once for all routes at document time (@fastify/swagger's `transform`) rather than by hand in
// each route file. Route files keep what only they know: summary, request and success schemas.
import type { RouteOptions } from 'fastify';
import { errorShapeSchemas } from './shapes.js';

type Schema = Record<string, any>;

/** `GET /api/v1/products/:id.json` -> `apiGetProductsById`; `POST /apps/developer/apps` -> `postAppsDeveloperApps`. */
export function operationIdOf(method: string, url: string): string {
  const api = url.startsWith('/api/v1/');
  const words = url
    .replace(/^\/api\/v1\//, '/')
    .replace(/\.json$/, '')
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => segment.split(/[^A-Za-z0-9:]+/).filter(Boolean))
    .map((word) => (word.startsWith(':') ? `By${pascal(word.slice(1))}` : pascal(word)));
  const verb = method.toLowerCase();
  return api ? `api${pascal(verb)}${words.join('')}` : `${verb}${words.join('')}`;
}

const pascal = (word: string) => word.replace(/(^|[-_])([a-z0-9])/gi, (_m, _sep, c: string) => c.toUpperCase());

const described = (description: string, schema: Schema) => ({ description, content: { 'application/json': { schema } } });

/**
 * The error responses of a route, from what the service enforces: validation and the input guard
 * (400, every route), a body over the limit (413, routes with a body), authentication (401) and
 * authorization (403) where the route has a credential, not found (404) where the path names a
 * resource, and the App API's rate limit (429) and rate-limit store outage (503).
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** Error statuses the route itself gives beyond the common ones, with what each means (for the reference). */
    errors?: Record<number, string>;
    /** A bare-body App API list whose pages are linked in the `Link` header (app-api.md Conventions 5). */
    pagedByLink?: boolean;
  }
}

export function errorResponses(route: Pick<RouteOptions, 'method' | 'url' | 'config'>, schema: Schema): Record<string, unknown> {
  const shape = (route.config as { shape?: 'errors' | 'envelope' } | undefined)?.shape ?? 'envelope';
  const body = errorShapeSchemas[shape];
  const method = String(route.method).toUpperCase();
  const secured = Array.isArray(schema.security) && schema.security.length > 0;
  const api = route.url.startsWith('/api/v1/');
  const out: Record<string, unknown> = { 400: described('The request is malformed or a field is invalid', body) };
  if (secured) {
    out[401] = described('No credential, or one that is invalid, expired or revoked', body);
    out[403] = described(api ? 'The token lacks the scope, or the resource belongs to another store' : 'The role may not use this route, or the resource belongs to another account or store', body);
  }
  if (route.url.includes(':') || route.url.includes('*')) out[404] = described('No such resource (or not visible to the caller)', body);
  if (['POST', 'PUT', 'PATCH'].includes(method)) out[413] = described('The request body is over 1 MiB', body);
  // What only the route knows: its own refusals (a 409 conflict, a 410 gone, a 422 rule), from `config.errors`.
  const own = (route.config as { errors?: Record<number, string> } | undefined)?.errors ?? {};
  for (const [status, description] of Object.entries(own)) out[status] = described(description, body);
  if (api) {
    out[429] = described('Rate limit exceeded; `Retry-After` says when to retry', errorShapeSchemas.rateLimit);
    out[503] = described('The rate-limit store is unavailable; retry shortly', body);
  }
  return out;
}

/**
 * The `transform` of @fastify/swagger: adds operationId and error responses to each documented
 * route. A route's own `operationId` or error response wins over the generated one.
 */
export function createOpenapiTransform() {
  const taken = new Map<string, number>();
  return ({ schema, url, route }: { schema: Schema; url: string; route: RouteOptions }) => {
    if (!schema || schema.hide) return { schema, url };
    const method = Array.isArray(route.method) ? route.method[0] : route.method;
    let operationId = schema.operationId ?? operationIdOf(method, url);
    // Two routes can only map to one id through punctuation (`a-b` vs `a_b`): number the later one.
    const seen = taken.get(operationId) ?? 0;
    taken.set(operationId, seen + 1);
    if (seen > 0 && !schema.operationId) operationId = `${operationId}${seen + 1}`;
    // Every route declares what it answers (test/route-schemas.test.ts); the errors come from here.
    const response = { ...errorResponses(route, schema), ...(schema.response ?? {}) };
    // A route no surface guards is public (the auth matrix test keeps that list explicit): say so.
    const security = schema.security ?? [];
    // A body that may come wrapped under its resource's key (src/http/resource-body.ts): both forms.
    const key = (route.config as { bodyKey?: string } | undefined)?.bodyKey;
    const body = key && schema.body ? { anyOf: [schema.body, { type: 'object', required: [key], properties: { [key]: schema.body } }], description: schema.body.description } : schema.body;
    // The list's paging, which its bare body does not carry (@fastify/swagger makes `headers` response headers).
    if ((route.config as { pagedByLink?: boolean } | undefined)?.pagedByLink && response[200]) {
      response[200] = { ...(response[200] as Schema), headers: { Link: LINK_HEADER } };
    }
    return { schema: { ...schema, operationId, security, response, ...(body ? { body } : {}) }, url };
  };
}

/**
 * Whether a route's body schema lets the body be left out: its type admits null (the validator
 * sees an absent body as null), or it names no type at all (`optionalBody`,
 * src/orders/schema-parts.ts), or one of its forms does (a body that may come wrapped, above).
 */
function admitsNoBody(schema: Schema): boolean {
  if (Array.isArray(schema.anyOf)) return schema.anyOf.some((form: Schema) => admitsNoBody(form));
  return schema.type === undefined || ([] as unknown[]).concat(schema.type).includes('null');
}

const LINK_HEADER = {
  type: 'string',
  description: 'The next and previous pages (RFC 8288): `<url>; rel="next"`, `<url>; rel="previous"`; absent on a single page',
};

const header = (description: string, type: 'string' | 'integer' = 'string') => ({ description, schema: { type } });

/**
 * The headers the App API puts on its answers (app-api.md Limits: "Headers on every `/api/v1/`
 * response"; C5.5): the version on each; the rate-limit headers on each but a 401 (a stranger is
 * not counted) and a 503 (the rate-limit store is down, nothing was counted); `Retry-After` on
 * every 429 and 503, anywhere (the login throttle's 429 and a draining process's 503 too).
 */
function answerHeaders(path: string, status: string): Record<string, unknown> {
  const headers: Record<string, unknown> = {};
  if (path.startsWith('/api/v1/')) {
    headers['X-SVC-Api-Version'] = header('The API version that answered (`2026-06`)');
    if (status !== '401' && status !== '503') {
      headers['X-RateLimit-Limit'] = header("Requests the app may make per window on this store (its tier's cap)", 'integer');
      headers['X-RateLimit-Remaining'] = header('Requests left in the window after this one', 'integer');
      headers['X-RateLimit-Reset'] = header('When the window resets (Unix seconds)', 'integer');
    }
  }
  if (status === '429' || status === '503') headers['Retry-After'] = header('Seconds to wait before trying again', 'integer');
  return headers;
}

const ERROR_SCHEMA_NAMES: Record<keyof typeof errorShapeSchemas, string> = {
  envelope: 'EnvelopeError',
  errors: 'ErrorsBody',
  rateLimit: 'RateLimitError',
};

/**
 * The `transformObject` of @fastify/swagger: the error bodies, inlined by each operation, become
 * three named schemas under `components.schemas` that every error response refers to.
 */
export function shareErrorSchemas({ openapiObject }: { openapiObject: Schema }): Schema {
  const byText = new Map<string, string>();
  openapiObject.components ??= {};
  openapiObject.components.schemas ??= {};
  for (const [shape, name] of Object.entries(ERROR_SCHEMA_NAMES)) {
    const schema = errorShapeSchemas[shape as keyof typeof errorShapeSchemas];
    openapiObject.components.schemas[name] = schema;
    byText.set(JSON.stringify(schema), name);
  }
  for (const [path, operations] of Object.entries<Schema>(openapiObject.paths ?? {})) {
    for (const operation of Object.values<Schema>(operations)) {
      // A body that may be absent is not a required request body.
      const bodySchema = operation?.requestBody?.content?.['application/json']?.schema;
      if (bodySchema && admitsNoBody(bodySchema)) operation.requestBody.required = false;
      for (const [status, response] of Object.entries<Schema>(operation?.responses ?? {})) {
        const headers = answerHeaders(path, status);
        if (Object.keys(headers).length) response.headers = { ...response.headers, ...headers };
        const media = response?.content?.['application/json'];
        const name = media && byText.get(JSON.stringify(media.schema));
        if (name) media.schema = { $ref: `#/components/schemas/${name}` };
      }
    }
  }
  return openapiObject;
}
