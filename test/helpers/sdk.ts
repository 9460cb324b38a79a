// The app SDK's side of an install, for tests of packages/app-sdk against the real platform: a
// merchant authorizes a new app, the SDK checks the handoff and exchanges its code.
import { expect } from 'vitest';
import type { Harness } from './harness.js';
import { createTestApp, signupMerchant, signupPartner, type Merchant, type TestApp } from './actors.js';
import { exchangeCode, verifyHandoff, type AppCredentials } from '../../packages/app-sdk/src/index.js';

/** The handoff's query the merchant's authorization redirects to (C4.2). */
export async function handoffFor(h: Harness, merchant: Merchant, app: TestApp): Promise<URLSearchParams> {
  const res = await h.req('GET', `/apps/oauth/authorize?client_id=${app.clientId}`, { token: merchant.token });
  expect(res.statusCode, res.body).toBe(200);
  return new URL(res.json().data.redirectUrl).searchParams;
}

/** A new app with `scopes`, installed on a new merchant's store through the SDK; `base` is the platform's URL. */
export async function installedThroughSdk(h: Harness, base: string, scopes: string[]) {
  const merchant = await signupMerchant(h);
  const partner = await signupPartner(h);
  const app = await createTestApp(h, partner.token, { scopes });
  const creds: AppCredentials = { baseUrl: base, clientId: app.clientId, clientSecret: app.clientSecret };
  const handoff = verifyHandoff(await handoffFor(h, merchant, app), app.clientSecret);
  if (!handoff.ok) throw new Error(handoff.reason);
  const tokens = await exchangeCode(creds, handoff);
  return { merchant, app, creds, handoff, tokens };
}
