// Review rules (C10.8: `rating` 1..5, `body?`), adversarial review of 2026-11-27: a rating sent as
// text is read only when it is a decimal whole number, and the body is counted in characters as
// the route's schema counts them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers/harness.js';
import { createTestApp } from './helpers/actors.js';
import { developer, install, merchant } from './helpers/billing.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

async function installedApp() {
  const dev = await developer(h);
  const app = await createTestApp(h, await dev.token());
  const m = await merchant(h);
  await install(h, m, app);
  const review = async (body: unknown) => h.req('POST', `/apps/${app.appId}/reviews`, { token: await m.fresh(), body });
  return { dev, app, review };
}

describe('C10.8 rating sent as text', () => {
  it('hex, binary, exponent and fraction spellings are not ratings: 400, and the app keeps no review', async () => {
    const { dev, app, review } = await installedApp();
    for (const rating of ['0x5', '0b11', '0o4', '5e0', '.5e1', '4.99999999999999999', '+4', '4.5', '4.']) {
      const res = await review({ rating });
      expect(res.statusCode, rating).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, state: 'error', message: 'rating must be a whole number from 1 to 5', data: null });
    }
    const shown = (await h.req('GET', `/apps/developer/apps/${app.appId}`, { token: await dev.token() })).json().data.app;
    expect(shown).toMatchObject({ rating: 0, reviewCount: 0 });
  });

  it('a decimal whole number as text is read as its number ("4", " 3 ", "5.0")', async () => {
    const { review } = await installedApp();
    expect((await review({ rating: '4' })).json().data.review.rating).toBe(4);
    expect((await review({ rating: ' 3 ' })).json().data.review.rating).toBe(3);
    const last = await review({ rating: '5.0' });
    expect(last.statusCode).toBe(200);
    expect(last.json().data).toMatchObject({ review: { rating: 5 }, app: { rating: 5, reviewCount: 1 } });
  });
});

describe('C10.8 body length', () => {
  it('5000 characters outside the BMP are taken (the schema counts characters); 5001 are refused', async () => {
    const { review } = await installedApp();
    const ok = await review({ rating: 4, body: '\u{1F600}'.repeat(5000) });
    expect(ok.statusCode, ok.body.slice(0, 200)).toBe(201);
    expect([...ok.json().data.review.body].length).toBe(5000);
    const tooLong = await review({ rating: 4, body: '\u{1F600}'.repeat(5001) });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().message).toBe('body must be at most 5000 characters');
  });
});
