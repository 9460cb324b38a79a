// The people and apps a test acts as: a merchant with a store, a partner (developer), an app
// installed on the store with its token (all in one call: storeWithApp), store staff and the
// platform operator. Every one is made through the service's own routes, as a client would.
import { randomBytes } from 'node:crypto';
import type { Harness } from './harness.js';

/** A short random tag for names and emails that must not collide between tests sharing a database. */
export const unique = () => randomBytes(5).toString('hex');

export interface Merchant {
  token: string;
  userId: string;
  storeId: string;
  slug: string;
  email: string;
}

export async function signupMerchant(h: Harness, options: { storeName?: string; email?: string } = {}): Promise<Merchant> {
  const email = options.email ?? `m-${unique()}@example.com`;
  const storeName = options.storeName ?? `Shop ${unique()}`;
  const res = await h.req('POST', '/auth/signup', { body: { email, password: 'correct-horse', name: 'Merchant', storeName } });
  if (res.statusCode !== 201) throw new Error(`signup failed: ${res.body}`);
  const { data } = res.json();
  return { token: data.token, userId: data.user.id, storeId: data.store.id, slug: data.store.storeURL, email };
}

export async function signupPartner(h: Harness): Promise<{ token: string; userId: string; email: string }> {
  const email = `p-${unique()}@example.com`;
  const res = await h.req('POST', '/auth/signup', { body: { email, password: 'correct-horse', name: 'Partner', role: 'PARTNER' } });
  if (res.statusCode !== 201) throw new Error(`signup failed: ${res.body}`);
  const { data } = res.json();
  return { token: data.token, userId: data.user.id, email };
}

export interface TestApp {
  appId: string;
  clientId: string;
  clientSecret: string;
  handle: string;
  developerToken: string;
}

export async function createTestApp(h: Harness, developerToken: string, body: Record<string, unknown> = {}): Promise<TestApp> {
  const res = await h.req('POST', '/apps/developer/apps', {
    token: developerToken,
    body: { name: `App ${unique()}`, appUrl: 'https://app.example.com', scopes: ['read_products', 'write_products', 'read_orders'], ...body },
  });
  if (res.statusCode !== 201) throw new Error(`app create failed: ${res.body}`);
  const { app } = res.json().data;
  return { appId: app.appId, clientId: app.clientId, clientSecret: app.clientSecret, handle: app.handle, developerToken };
}

export interface Installed {
  accessToken: string;
  refreshToken: string;
  installationId: string;
  tokenResponse: any;
}

/** Authorize as the merchant, then exchange the handed-off code as the app would. */
export async function installApp(h: Harness, merchant: Merchant, app: TestApp, scope?: string): Promise<Installed> {
  const q = new URLSearchParams({ client_id: app.clientId, ...(scope ? { scope } : {}) });
  const auth = await h.req('GET', `/apps/oauth/authorize?${q}`, { token: merchant.token });
  if (auth.statusCode !== 200) throw new Error(`authorize failed: ${auth.body}`);
  const { redirectUrl, installationId } = auth.json().data;
  const handoff = new URL(redirectUrl).searchParams;
  const res = await h.req('POST', '/apps/oauth/token', {
    body: { client_id: app.clientId, client_secret: app.clientSecret, grant_type: 'authorization_code', code: handoff.get('code'), state: handoff.get('state') },
  });
  if (res.statusCode !== 200) throw new Error(`token exchange failed: ${res.body}`);
  const data = res.json().data;
  return { accessToken: data.access_token, refreshToken: data.refresh_token, installationId, tokenResponse: data };
}

/** A store, its merchant, a developer, an app installed on the store and its access token. */
export async function storeWithApp(h: Harness, appBody: Record<string, unknown> = {}) {
  const merchant = await signupMerchant(h);
  const partner = await signupPartner(h);
  const app = await createTestApp(h, partner.token, appBody);
  const installed = await installApp(h, merchant, app);
  return { merchant, partner, app, ...installed };
}

/** The platform operator (SUPER_ADMIN) as created from SVC_ADMIN_EMAIL/SVC_ADMIN_PASSWORD. */
export async function operatorToken(h: Harness): Promise<string> {
  const { ensureOperator } = await import('../../src/accounts/accounts.service.js');
  const email = `ops-${unique()}@example.com`;
  await ensureOperator(h.deps, email, 'operator-password');
  const res = await h.req('POST', '/auth/login', { body: { email, password: 'operator-password' } });
  return res.json().data.token;
}

export type StaffRole = 'STAFF_ADMIN' | 'MANAGER';

/** A staff account (C2.4) of the merchant's store, logged in: its email, the creating response's body and its token. */
export async function createStaff(h: Harness, merchant: string | { token: string }, role: StaffRole) {
  const email = `staff-${unique()}@example.com`;
  const password = 'staff-password';
  const res = await h.req('POST', '/stores/staff', { token: typeof merchant === 'string' ? merchant : merchant.token, body: { email, password, name: 'Staff', role } });
  if (res.statusCode !== 201) throw new Error(`staff create failed: ${res.statusCode} ${res.body}`);
  const login = await h.req('POST', '/auth/login', { body: { email, password } });
  if (login.statusCode !== 200) throw new Error(`staff login failed: ${login.statusCode} ${login.body}`);
  return { email, created: res.json(), token: login.json().data.token as string };
}

/** A logged-in staff account's token (merchant: its token, or the Merchant). */
export async function staffToken(h: Harness, merchant: string | { token: string }, role: StaffRole): Promise<string> {
  return (await createStaff(h, merchant, role)).token;
}
