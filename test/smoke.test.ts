import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { storeWithApp } from './helpers/actors.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

describe('smoke', () => {
  it('installs an app and reads products', async () => {
    const s = await storeWithApp(h);
    const res = await h.req('GET', '/api/v1/products.json', { token: s.accessToken });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ products: [] });
    expect(res.headers['x-svc-api-version']).toBe('2026-06');
  });
});
