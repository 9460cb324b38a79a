// Hostile input is the client's mistake, never a 500 (issue 10, items 1 to 3): NUL characters and
// unpaired UTF-16 surrogates in bodies, query strings and path parameters, deeply nested JSON, and
// bodies over the size limit, each answered in the endpoint's own error shape (C5.1). The guard
// lives in src/http/input-guard.ts; the property over every operation is test/fuzz-openapi.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, unlimitedLimiter } from './helpers/harness.js';
import { operatorToken, storeWithApp } from './helpers/actors.js';
import { expectApiHeaders, expectEnvelopeError, expectErrorsBody } from './helpers/expect.js';
import { multipartBody } from './helpers/catalog.js';
import { SCOPES } from '../src/oauth/scopes.js';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../src/http/input-guard.js';
import { uuidv7 } from '../src/ids.js';
import { boundedMessage, envelopeError, errorsBody, MAX_ERROR_MESSAGE_CHARS } from '../src/http/shapes.js';

let h: Harness;
let s: Awaited<ReturnType<typeof storeWithApp>>;
beforeAll(async () => {
  h = await createHarness({}, { limiter: unlimitedLimiter() });
  s = await storeWithApp(h, { scopes: [...SCOPES] });
});
afterAll(() => h?.close());

const json = (method: string, url: string, payload: string, token?: string) =>
  h.req(method, url, { token, payload, headers: { 'content-type': 'application/json' } });

/** `depth` arrays nested in one another: `[[[...]]]`. */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('NUL characters (PostgreSQL 22021) -> 400 in the endpoint shape', () => {
  it('in a JSON body: App API errors body naming the field, with the version header', async () => {
    const res = await json('POST', '/api/v1/products.json', '{"product":{"title":"a\\u0000b"}}', s.accessToken);
    expectErrorsBody(res, 400, 'product.title');
    expectApiHeaders(res);
  });

  it('in a JSON key, and in a body without any credential (login): envelope', async () => {
    expectErrorsBody(await json('POST', '/api/v1/products.json', '{"product":{"ti\\u0000tle":"x"}}', s.accessToken), 400, 'product key');
    expectEnvelopeError(await json('POST', '/auth/login', '{"email":"a\\u0000b@x.test","password":"x"}'), 400, /email/);
  });

  it('in a path parameter or a query value', async () => {
    expectEnvelopeError(await json('POST', '/storefront/%00/events', '{"type":"session","sessionId":"a"}'), 400, /storeURL/);
    expectEnvelopeError(await h.req('GET', '/apps/oauth/authorize?client_id=%00', { token: s.merchant.token }), 400, /client_id/);
    expectEnvelopeError(await h.req('GET', `/apps/developer/${s.app.appId}/webhook-deliveries?topic=%00`, { token: s.partner.token }), 400, /topic/);
    const code = await h.req('GET', '/api/v1/discounts.json?code=%00', { token: s.accessToken });
    expectEnvelopeError(code, 400, /code/);
    expectApiHeaders(code);
    const id = await h.req('GET', '/api/v1/customers/%00.json', { token: s.accessToken });
    expectErrorsBody(id, 400, 'id');
    // Repeated keys arrive as an array: each value is checked.
    expectErrorsBody(await h.req('GET', '/api/v1/orders.json?status=any&status=%00', { token: s.accessToken }), 400, 'status[1]');
  });

  it('authentication still comes first: no credential is a 401, not a 400', async () => {
    const res = await json('POST', '/api/v1/products.json', '{"product":{"title":"a\\u0000b"}}');
    expectErrorsBody(res, 401);
    expectEnvelopeError(await h.req('GET', '/apps/oauth/authorize?client_id=%00'), 401);
  });

  it('in a form-encoded body and in a multipart text field', async () => {
    const form = await h.req('POST', '/apps/oauth/token', { payload: 'client_id=%00&grant_type=authorization_code', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectEnvelopeError(form, 400, /client_id/);
    const product = await h.req('POST', '/products', { token: s.merchant.token, body: { title: 'Shirt', variants: [{ name: 'Size', value: 'M', price: 10 }] } });
    const variantId = (await h.db.query<{ id: string }>('SELECT id FROM variants WHERE product_id = $1', [product.json().data.product_id])).rows[0].id;
    const { payload, contentType } = multipartBody({ name: 'a\u0000b' });
    const res = await h.req('PATCH', `/variants/update-single-variant/${variantId}`, { token: s.merchant.token, payload: payload as any, headers: { 'content-type': contentType } });
    expectEnvelopeError(res, 400, /name/);
  });

  it('other control characters are ordinary text', async () => {
    const res = await h.req('POST', '/api/v1/products.json', { token: s.accessToken, body: { product: { title: 'a\u0001\u001f\u007f\u0085b' } } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().product.title).toBe('a\u0001\u001f\u007f\u0085b');
  });
});

describe('unpaired UTF-16 surrogates (jsonb 22P02) -> 400', () => {
  it('in product tags and in an order address field', async () => {
    expectErrorsBody(await json('POST', '/api/v1/products.json', '{"product":{"title":"x","tags":["\\ud800x"]}}', s.accessToken), 400, 'product.tags[0]');
    expectErrorsBody(await json('POST', '/api/v1/products.json', '{"product":{"title":"\\udc00"}}', s.accessToken), 400, 'product.title');
    expectEnvelopeError(await json('PATCH', `/orders/update-signle-order/${uuidv7()}`, '{"city":"\\ud800x"}', s.merchant.token), 400, /city/);
  });

  it('a paired surrogate (an emoji) is ordinary text', async () => {
    const res = await json('POST', '/api/v1/products.json', '{"product":{"title":"\\ud83d\\ude00 x","tags":["\\ud83d\\ude00"]}}', s.accessToken);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().product.title).toBe('\u{1F600} x');
  });
});

describe('nesting and size', () => {
  it(`JSON nested deeper than ${MAX_JSON_DEPTH} levels -> 400, ${MAX_JSON_DEPTH} levels pass the guard`, async () => {
    const deep = `{"metafields":[{"ownerType":"shop","ownerId":"${s.merchant.storeId}","namespace":"c","key":"k","type":"json","value":${nested(5000)}}]}`;
    expectEnvelopeError(await json('POST', '/api/v1/metafields/bulk.json', deep, s.accessToken), 400, /nested too deeply/);
    expectEnvelopeError(await json('POST', '/api/v1/pages.json', nested(MAX_JSON_DEPTH + 1), s.accessToken), 400, /nested too deeply/);
    // At the limit the body reaches the route, which refuses an array for its own reason.
    expectEnvelopeError(await json('POST', '/api/v1/pages.json', nested(MAX_JSON_DEPTH), s.accessToken), 400, /object/);
  });

  it('a json metafield sent as JSON text gets the same bounds (it is read back and copied into jsonb)', async () => {
    const value = (v: string) => ({ metafields: [{ ownerType: 'shop', ownerId: s.merchant.storeId, namespace: 'c', key: 'k', type: 'json', value: v }] });
    for (const text of [nested(5000), '{"a":"x\\u0000"}', '["\\ud800"]']) {
      const res = await h.req('POST', '/api/v1/metafields/bulk.json', { token: s.accessToken, body: value(text) });
      expectEnvelopeError(res, 400, /json value/);
    }
    expect((await h.req('POST', '/api/v1/metafields/bulk.json', { token: s.accessToken, body: value('{"a":[1,{"b":null}]}') })).statusCode).toBe(200);
  });

  it(`a body over ${MAX_BODY_BYTES} bytes -> 413 in the endpoint shape`, async () => {
    const big = JSON.stringify({ product: { title: 'x'.repeat(MAX_BODY_BYTES) } });
    const api = await json('POST', '/api/v1/products.json', big, s.accessToken);
    expectErrorsBody(api, 413);
    expectApiHeaders(api);
    expectEnvelopeError(await json('POST', '/auth/login', big), 413);
  });
});

describe('errors raised before routing keep the endpoint shape (C5.1)', () => {
  it('a path Fastify cannot decode, or a parameter over the length limit: 400 in the shape of the endpoint named', async () => {
    for (const url of ['/api/v1/shipping_zones/%FF.json', `/api/v1/shipping_zones/${'x'.repeat(300)}.json`, '/api/v1/orders/%C0%80/fulfillments.json']) {
      const res = await h.req('GET', url, { token: s.accessToken });
      expectEnvelopeError(res, 400);
      expectApiHeaders(res); // an authenticated App API request: counted, with rate-limit headers (C5.5)
    }
    expectErrorsBody(await h.req('GET', '/api/v1/products/%FF.json', { token: s.accessToken }), 400);
    expectErrorsBody(await h.req('GET', '/api/v1/no-such-thing/%FF', { token: s.accessToken }), 400);
    expectEnvelopeError(await h.req('GET', `/apps/developer/apps/${'x'.repeat(300)}`, { token: s.partner.token }), 400, /^A path parameter is too long$/);
  });
});

describe('prototype keys', () => {
  it('__proto__ and constructor.prototype in a body -> 400, never a polluted object', async () => {
    expectErrorsBody(await json('POST', '/api/v1/products.json', '{"product":{"title":"x","__proto__":{"admin":true}}}', s.accessToken), 400);
    expectErrorsBody(await json('POST', '/api/v1/products.json', '{"constructor":{"prototype":{"admin":true}}}', s.accessToken), 400);
    expectEnvelopeError(await json('POST', '/apps/admin/clock/advance', '{"__proto__":{"seconds":1}}', await operatorToken(h)), 400);
    expect(({} as any).admin).toBeUndefined();
  });
});

describe('error messages are bounded (issue 10: no echo of a client\'s megabyte)', () => {
  it('a message or field past MAX_ERROR_MESSAGE_CHARS is cut, never inside a surrogate pair, saying how much was left out', () => {
    const long = 'a'.repeat(MAX_ERROR_MESSAGE_CHARS - 1) + '\u{1F600}' + 'b'.repeat(5000);
    const cut = boundedMessage(long);
    expect(cut.startsWith('a'.repeat(MAX_ERROR_MESSAGE_CHARS - 1) + '...')).toBe(true);
    expect(cut).toBe(`${'a'.repeat(MAX_ERROR_MESSAGE_CHARS - 1)}... (${long.length - (MAX_ERROR_MESSAGE_CHARS - 1)} more characters)`);
    expect(boundedMessage('x'.repeat(MAX_ERROR_MESSAGE_CHARS))).toBe('x'.repeat(MAX_ERROR_MESSAGE_CHARS));
    expect(envelopeError(400, long).message!.length).toBeLessThan(MAX_ERROR_MESSAGE_CHARS + 40);
    const fields = errorsBody('ignored', { [long]: [long, 'short'] }).errors;
    expect(Object.keys(fields)[0].length).toBeLessThan(MAX_ERROR_MESSAGE_CHARS + 40);
    expect(Object.values(fields)[0]).toEqual([boundedMessage(long), 'short']);
  });
});
