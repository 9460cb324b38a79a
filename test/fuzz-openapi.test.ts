// The property of issue 10: whatever a client sends to any documented operation, the service
// answers without a 5xx, every error in that endpoint's shape (C5.1: the errors body for the App
// API's products, collections, orders, customers, product listings and webhook subscriptions; the
// envelope everywhere else; the rate-limit body for a 429), and no body shows a stack trace or SQL.
//
// Design (docs/decisions.md, "Hardening: input"):
// - The operations come from the service's own OpenAPI document, so a new route is fuzzed the day
//   it is added. Each gets FUZZ_CASES requests (48 by default), made by a seeded generator (FUZZ_SEED):
//   case i puts hostile value i (then random ones) into one place (a body node, a query value, a
//   path parameter, the media type), so every hostile value meets every operation.
// - Requests carry a valid credential for their surface and real ids of one store, so a hostile
//   value reaches the code behind authentication and lookups; a 401 with a valid credential fails.
// - The rate limiter never refuses (a limiter whose clock moves a window per request): a 429 would
//   hide what the request would have done.
// - Operations that would break the fixtures for later ones (deletes, uninstall, rotate-secret, the
//   clock, jobs, shop redaction) run last, one after another.
// FUZZ_SEED and FUZZ_CASES replay or widen a run; FUZZ_STATS=1 prints the statuses seen per
// operation (how deep the cases reach), FUZZ_TRACE=<regex> every request of the matching operations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { addKey, BODY_VALUES, hash32, prng, putValue, repeatElement, toJson, URL_VALUES, WRONG_BODIES, type Mutated, type Rand } from './fixtures/fuzz-inputs.js';
import { knownParam, knownQuery, makeKnown, seedBodies, type Known } from './fixtures/fuzz-seeds.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20260610);
const CASES = Number(process.env.FUZZ_CASES ?? 48);
const CONCURRENCY = 4;
/** The longest error body any answer may have (the hostile values include a 1,000,000-character string). */
const MAX_ERROR_BODY_CHARS = 4096;

interface Operation {
  method: string;
  path: string;
  params: string[];
  query: string[];
  security: string | null;
  hasBody: boolean;
  schemaProps: string[];
  /** The statuses the reference lists for the operation's answers. */
  statuses: string[];
  /** The response headers the reference declares, by status (lower case). */
  headers: Record<string, string[]>;
}

interface Case {
  op: Operation;
  url: string;
  token?: string;
  contentType?: string;
  payload?: string;
  what: string;
}

let h: Harness;
let known: Known;
let operations: Operation[];

beforeAll(async () => {
  h = await createHarness({ SVC_ALLOW_PRIVATE_WEBHOOKS: '1' }, { limiter: unlimitedLimiter() });
  known = await makeKnown(h);
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  operations = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    if (path.startsWith('/docs')) continue;
    for (const [method, op] of Object.entries<any>(item)) {
      const parameters: any[] = op.parameters ?? [];
      const schema = op.requestBody?.content?.['application/json']?.schema;
      operations.push({
        method: method.toUpperCase(),
        path,
        params: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        security: op.security?.[0] ? Object.keys(op.security[0])[0] : null,
        hasBody: ['POST', 'PUT', 'PATCH'].includes(method.toUpperCase()),
        schemaProps: Object.keys(schema?.properties ?? {}),
        statuses: Object.keys(op.responses ?? {}),
        headers: Object.fromEntries(Object.entries<any>(op.responses ?? {}).map(([status, r]) => [status, Object.keys(r.headers ?? {}).map((k) => k.toLowerCase())])),
      });
    }
  }
}, 120_000);
afterAll(() => h?.close());

// ---------------------------------------------------------------------------------------------
// Which credential, which error shape

/** The merchant admin surface (C7): the merchant JWT, or the operator naming the store. */
const MERCHANT_ADMIN = /^\/(products|collections|variants|metafields\/bulk|pages|menus|customers|discounts|webhooks|orders|notifications|apps\/gdpr\/(data-request|customer-redact|shop-redact|requests))\b/;

function credential(op: Operation, rand: Rand): { token?: string; operatorStore: boolean } {
  if (!op.security) return { operatorStore: false };
  if (op.security === 'accessToken') return { token: known.accessToken, operatorStore: false };
  if (op.path.startsWith('/apps/admin/')) return { token: known.operatorToken, operatorStore: false };
  if (op.path.startsWith('/apps/developer/')) return { token: known.developerToken, operatorStore: false };
  if (MERCHANT_ADMIN.test(op.path) && rand.chance(0.2)) return { token: known.operatorToken, operatorStore: true };
  return { token: known.merchantToken, operatorStore: false };
}

/** C5.1: the App API resources whose errors use the errors body; fulfillments use the envelope. */
const ERRORS_BODY = /^\/api\/v1\/(products|collections|orders|customers|product_listings|webhooks)\b/;
const shapeOf = (path: string) => (ERRORS_BODY.test(path) && !path.includes('fulfillments') ? 'errors' : 'envelope');

/** Internals that must never reach a client: stack frames, SQL, driver and runtime messages. */
const LEAKS: RegExp[] = [
  /\n\s+at /, /\bat (async )?[\w$.<>]+ \(/, /node_modules/, /\.(ts|js|mjs):\d+/, /\bSELECT\b/, /\bINSERT INTO\b/, /\bDELETE FROM\b/,
  /\bUPDATE \w+ SET\b/, /syntax error/i, /violates/i, /\brelation "/i, /\bcolumn "/i, /duplicate key/i, /invalid input syntax/i,
  /out of range for type/i, /\bSQLSTATE\b/i, /pglite/i, /\b(TypeError|ReferenceError|RangeError)\b/, /call stack/i,
  /Cannot read propert/i, /is not a function/, /undefined is not/,
];

// ---------------------------------------------------------------------------------------------
// Making cases

/** A body made from the schema's property names when the operation has no seed. */
function schemaSeed(op: Operation): Record<string, unknown> {
  return Object.fromEntries(op.schemaProps.map((p) => [p, 'x']));
}

function makeCase(op: Operation, rand: Rand, i: number): Case {
  const key = `${op.method} ${op.path}`;
  const seeds = seedBodies(known, `${hash32(key, SEED).toString(36)}${i}`);
  const notes: string[] = [];
  const cred = credential(op, rand);
  if (cred.operatorStore) notes.push('as operator');
  const params: Record<string, string> = {};
  for (const name of op.params) {
    let value = encodeURIComponent(knownParam(known, op.path, name));
    // Jobs are slow: a real job name now and then, hostile names otherwise.
    if (name === 'job' && rand.chance(0.85)) value = rand.pick(URL_VALUES);
    params[name] = value;
  }
  const query: [string, string][] = op.query.filter(() => rand.chance(0.5)).map((q) => [q, encodeURIComponent(knownQuery(known, op.path, q))]);
  if (cred.operatorStore) query.push(['storeId', known.storeId]);
  let body: unknown = op.hasBody ? (seeds[key] ?? schemaSeed(op)) : undefined;
  if (cred.operatorStore && body && typeof body === 'object' && !Array.isArray(body)) body = { ...body, storeId: known.storeId };
  let wrong: (typeof WRONG_BODIES)[number] | undefined;

  // Where the hostile value goes: case i tries value i of that place's list, then random ones.
  const places = [
    ...(op.hasBody ? ['body', 'body', 'body', 'body-key', 'body-repeat', 'media'] : []),
    ...(op.params.length ? ['param', 'param'] : []),
    'query',
  ];
  const mutations = rand.chance(0.3) ? 2 : 1;
  for (let m = 0; m < mutations; m++) {
    const place = rand.pick(places);
    const nth = <T>(list: readonly T[]) => (m === 0 && i < list.length ? list[i] : rand.pick(list));
    let mutated: Mutated | undefined;
    if (place === 'body') mutated = putValue(body, rand, nth(BODY_VALUES));
    else if (place === 'body-key') mutated = addKey(body, rand, nth(BODY_VALUES));
    else if (place === 'body-repeat') mutated = repeatElement(body, rand);
    if (mutated) {
      body = mutated.body;
      notes.push(mutated.note);
    } else if (place === 'media') {
      wrong = nth(WRONG_BODIES);
      notes.push(`body as ${wrong.label}`);
    } else if (place === 'param') {
      const name = rand.pick(op.params);
      params[name] = nth(URL_VALUES);
      notes.push(`param ${name} = ${params[name].slice(0, 40)}`);
    } else {
      // A documented parameter, or one many routes read (page, limit, storeId); sometimes repeated.
      // A hostile key now and then: keys are decoded input too.
      const name = rand.chance(0.1) ? rand.pick(['%00', 'a%ED%A0%80', '__proto__', 'constructor', '%5B%5D'])
        : op.query.length && rand.chance(0.7) ? rand.pick(op.query) : rand.pick(['page', 'limit', 'storeId', 'status', 'since_id']);
      const value = nth(URL_VALUES);
      const at = query.findIndex(([q]) => q === name);
      if (at >= 0 && rand.chance(0.5)) query.push([name, value]);
      else if (at >= 0) query[at] = [name, value];
      else query.push([name, value]);
      notes.push(`query ${name} = ${value.slice(0, 40)}`);
    }
  }

  const path = op.path.replace(/\{(\w+)\}/g, (_, name) => params[name]);
  const qs = query.map(([k, v]) => `${k}=${v}`).join('&');
  const url = qs ? `${path}?${qs}` : path;
  const c: Case = { op, url, token: cred.token, what: `${op.method} ${url.slice(0, 120)} | ${notes.join('; ')}` };
  if (wrong) {
    c.contentType = wrong.contentType;
    c.payload = wrong.payload;
  } else if (body !== undefined) {
    c.contentType = 'application/json';
    c.payload = toJson(body);
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Sending and judging

/** Response headers that carry meaning for a client, which the reference must declare where they are sent. */
const DOCUMENTED_HEADERS = ['link', 'x-svc-api-version', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after'];

/** Statuses seen per operation, printed with FUZZ_STATS=1 (to see how deep the cases reach). */
const stats = new Map<string, Record<number, number>>();

async function send(c: Case): Promise<string | null> {
  const headers: Record<string, string> = {};
  if (c.token) headers.authorization = `Bearer ${c.token}`;
  if (c.contentType) headers['content-type'] = c.contentType;
  const res = await h.app.inject({ method: c.op.method as any, url: c.url, headers, payload: c.payload });
  const seen = stats.get(`${c.op.method} ${c.op.path}`) ?? {};
  seen[res.statusCode] = (seen[res.statusCode] ?? 0) + 1;
  stats.set(`${c.op.method} ${c.op.path}`, seen);
  if (process.env.FUZZ_TRACE && new RegExp(process.env.FUZZ_TRACE).test(`${c.op.method} ${c.op.path}`)) console.log(c.what.slice(0, 160), '->', res.statusCode, res.body.slice(0, 160));
  const fail = (why: string) => `${c.what}\n    -> ${res.statusCode} ${why}: ${res.body.slice(0, 300)}`;
  if (res.statusCode >= 500) return fail('server error');
  // The reference is the app developer's contract: an answer it does not list (a 422 the route
  // gives but never declared) is a client generated from it left without a case.
  if (!c.op.statuses.includes(String(res.statusCode))) return fail(`a status the API reference does not list (it lists ${c.op.statuses.join(', ')})`);
  if (c.op.path.startsWith('/api/v1/') && res.headers['x-svc-api-version'] !== '2026-06') return fail('no X-SVC-Api-Version header');
  // The headers a client acts on (paging, the rate limit, when to retry) are in the reference for
  // the status they came with, as the statuses themselves are.
  const undeclared = DOCUMENTED_HEADERS.filter((name) => res.headers[name] !== undefined && !c.op.headers[String(res.statusCode)]?.includes(name));
  if (undeclared.length) return fail(`headers the API reference does not declare for this status: ${undeclared.join(', ')}`);
  if (c.token && res.statusCode === 401) return fail('a valid credential was refused');
  if (res.statusCode < 400) return null;
  for (const leak of LEAKS) if (leak.test(res.body)) return fail(`leaks internals (${leak})`);
  // An error names what was wrong; it never hands a client's megabyte back (an echo without bound).
  if (res.body.length > MAX_ERROR_BODY_CHARS) return fail(`error body of ${res.body.length} characters`);
  let body: any;
  try {
    body = res.json();
  } catch {
    return fail('error body is not JSON');
  }
  if (res.statusCode === 429) {
    return body && typeof body.error === 'string' && typeof body.message === 'string' && Object.keys(body).length === 2 ? null : fail('not the rate-limit body');
  }
  if (shapeOf(c.op.path) === 'errors') {
    const ok = body && Object.keys(body).length === 1 && body.errors && typeof body.errors === 'object' && Object.keys(body.errors).length > 0 &&
      Object.values(body.errors).every((m) => Array.isArray(m) && m.length > 0 && m.every((s) => typeof s === 'string'));
    if (!ok) return fail('not the errors body');
    const misnamed = Object.keys(body.errors).find((key) => misnamedField(key, c.payload));
    return misnamed === undefined ? null : fail(`field "${misnamed}" names an array position with a dot, or an object key with brackets`);
  }
  const ok = body && Object.keys(body).length === 6 && body.status === res.statusCode && body.state === 'error' && typeof body.message === 'string' &&
    body.message.length > 0 && body.data === null && body.count === null && body.pagination === null;
  return ok ? null : fail('not the envelope error');
}

/**
 * One naming of fields in errors bodies (src/http/field-path.ts): keys with dots, array positions in
 * brackets. The field is walked in the body that was sent (and in its one wrapped object, for
 * `{ "product": { ... } }`): a dotted step of digits that lands on an array, or a bracketed one on
 * anything else, is misnamed. A step the body does not have ends the walk (a missing field).
 */
function misnamedField(key: string, payload: string | undefined): boolean {
  let sent: unknown;
  try {
    sent = payload === undefined ? undefined : JSON.parse(payload);
  } catch {
    return false;
  }
  const steps = [...key.matchAll(/\[(\d+)\]|\.?([^.[\]]+)/g)].map((m): { position: number } | { key: string } => (m[1] !== undefined ? { position: Number(m[1]) } : { key: m[2] ?? '' }));
  const walk = (root: unknown): boolean => {
    let node = root;
    for (const step of steps) {
      if (node === null || typeof node !== 'object') return false;
      if ('position' in step) {
        if (!Array.isArray(node)) return true;
        node = node[step.position];
      } else {
        if (Array.isArray(node)) return /^\d+$/.test(step.key);
        if (!(step.key in node)) return false;
        node = (node as Record<string, unknown>)[step.key];
      }
    }
    return false;
  };
  const wrapped = sent && typeof sent === 'object' && !Array.isArray(sent) && Object.keys(sent).length === 1 ? Object.values(sent)[0] : undefined;
  return walk(sent) || (wrapped !== undefined && walk(wrapped));
}

async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

/** Operations that change the fixtures for the others: run last, in this order, one at a time. */
const LATE: RegExp[] = [/^DELETE \/(api\/v1|products|webhooks)/, /^POST \/orders\/\{orderId\}\/(refund|cancel)/, /admin\/jobs/, /admin\/developers/, /shop-redact/, /rotate-secret/, /^DELETE \/apps\/installations/, /clock\/advance/];
const lateRank = (op: Operation) => LATE.findIndex((re) => re.test(`${op.method} ${op.path}`));

describe('every OpenAPI operation, fed malformed input (issue 10)', () => {
  it(`answers without a 5xx, in the endpoint's error shape, without internals (seed ${SEED}, ${CASES} cases per operation)`, async () => {
    expect(operations.length).toBeGreaterThan(90);
    for (const [name, value] of Object.entries(known)) expect(value, name).toBeDefined();
    const failures: string[] = [];
    const run = async (ops: Operation[], concurrency: number) => {
      const cases = ops.flatMap((op) => {
        const rand = prng(hash32(`${op.method} ${op.path}`, SEED));
        return Array.from({ length: CASES }, (_, i) => makeCase(op, rand, i));
      });
      await pool(cases, concurrency, async (c) => {
        const failure = await send(c);
        if (failure) failures.push(failure);
      });
    };
    await run(operations.filter((op) => lateRank(op) < 0), CONCURRENCY);
    // The fixtures still work: no hostile input above broke the store, the app or its token.
    expect((await h.req('GET', '/api/v1/products.json', { token: known.accessToken })).statusCode).toBe(200);
    const late = operations.filter((op) => lateRank(op) >= 0).sort((a, b) => lateRank(a) - lateRank(b));
    for (const op of late) await run([op], 1);
    if (process.env.FUZZ_STATS) for (const [op, seen] of stats) console.log(op.padEnd(70), JSON.stringify(seen));
    expect(failures.length, `${failures.length} failures:\n${[...new Set(failures)].slice(0, 40).join('\n')}`).toBe(0);
  }, 300_000);
});
