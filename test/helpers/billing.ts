// The billing area's factory, shared by the billing, ledger, payout and developer-analytics tests.
//
// Time: these tests move the harness clock with `h.clock.advance` (this process only) rather than
// `h.advance`, which writes the shared offset to the database: on PostgreSQL every test file shares
// one database, and another file's clock jumps must not move ours (or ours theirs).
import { afterAll, beforeAll } from 'vitest';
import type { Harness } from './harness.js';
import { openPostgres } from '../../src/db/postgres.js';
import type { Db } from '../../src/db/db.js';
import type { Deps } from '../../src/deps.js';
import { installApp, operatorToken, signupMerchant, signupPartner, createTestApp, unique, type Merchant } from './actors.js';
import type { Role } from '../../src/accounts/jwt.js';
import { uuidv7 } from '../../src/ids.js';

/** A fresh platform JWT on the service clock (tokens live 12 h; these tests move months ahead). */
export function tokenFor(h: Harness, id: string, role: Role, storeId: string | null = null): Promise<string> {
  return h.deps.jwt.sign({ id, role, storeId });
}

function subOf(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub;
}

/** The operator, signed in again on demand. */
export async function operator(h: Harness): Promise<() => Promise<string>> {
  const id = subOf(await operatorToken(h));
  return () => tokenFor(h, id, 'SUPER_ADMIN');
}

/** Move this harness's clock to `at` (never backwards). */
export function advanceTo(h: Harness, at: Date): void {
  const ms = at.getTime() - h.clock.nowMs();
  if (ms > 0) h.clock.advance(ms / 1000);
}

export const days = (n: number) => n * 86_400;

export interface Developer {
  userId: string;
  token(): Promise<string>;
}

export async function developer(h: Harness): Promise<Developer> {
  const p = await signupPartner(h);
  return { userId: p.userId, token: () => tokenFor(h, p.userId, 'PARTNER') };
}

export async function merchant(h: Harness, options: { email?: string } = {}): Promise<Merchant & { fresh(): Promise<string> }> {
  const m = await signupMerchant(h, { email: options.email });
  return { ...m, fresh: () => tokenFor(h, m.userId, 'MERCHANT', m.storeId) };
}

export interface Pricing {
  amount: string;
  currency?: string;
  interval?: 'month' | 'year';
  trialDays?: number;
}

export async function paidApp(h: Harness, dev: Developer, pricing: Pricing) {
  return createTestApp(h, await dev.token(), { pricing: { type: 'recurring', currency: 'USD', interval: 'month', ...pricing } });
}

/** Install `app` on the merchant's store (fresh tokens, whatever the clock says). */
export async function install(h: Harness, m: Merchant & { fresh(): Promise<string> }, app: Awaited<ReturnType<typeof paidApp>>) {
  return installApp(h, { ...m, token: await m.fresh() }, app);
}

export async function installation(h: Harness, installationId: string) {
  return (await h.db.query('SELECT * FROM installations WHERE id = $1', [installationId])).rows[0];
}

export async function transactionsOf(h: Harness, installationId: string) {
  return (await h.db.query('SELECT * FROM app_transactions WHERE installation_id = $1 ORDER BY period_start', [installationId])).rows;
}

/** Minimal rows for ledger tests that post charges directly (no HTTP, no password hashing). */
export async function insertDeveloperWithInstallation(h: Harness) {
  const now = h.clock.now();
  const devId = uuidv7();
  const ownerId = uuidv7();
  const storeId = uuidv7();
  const appId = uuidv7();
  const installationId = uuidv7();
  const tag = unique();
  await h.db.transaction(async (tx) => {
    await tx.query(`INSERT INTO users (id, email, name, role, password_hash, created_at, updated_at) VALUES ($1, $2, 'Dev', 'PARTNER', 'x', $3, $3)`, [devId, `dev-${tag}@example.com`, now]);
    await tx.query(`INSERT INTO users (id, email, name, role, password_hash, created_at, updated_at) VALUES ($1, $2, 'Owner', 'MERCHANT', 'x', $3, $3)`, [ownerId, `own-${tag}@example.com`, now]);
    await tx.query(`INSERT INTO stores (id, business, slug, email, owner_id, created_at, updated_at) VALUES ($1, 'Shop', $2, $3, $4, $5, $5)`, [storeId, `shop-${tag}`, `own-${tag}@example.com`, ownerId, now]);
    // A free app: the billing job never charges it, so only the test's own charges reach the ledger.
    await tx.query(
      `INSERT INTO apps (id, developer_id, name, handle, client_id, client_secret_enc, app_url, scopes, created_at, updated_at)
       VALUES ($1, $2, 'Ledger app', $3, $4, 'x', 'https://app.example.com', '[]', $5, $5)`,
      [appId, devId, `ledger-${tag}`, `client-${tag}`, now],
    );
    await tx.query(
      `INSERT INTO installations (id, app_id, store_id, status, scopes, installed_version, created_at, updated_at)
       VALUES ($1, $2, $3, 'active', '[]', '1.0.0', $4, $4)`,
      [installationId, appId, storeId, now],
    );
  });
  return { developerId: devId, storeId, appId, installationId, storeEmail: `own-${tag}@example.com` };
}

/**
 * The harness's deps and two more with connection pools of their own (same clock, config and
 * providers), like separate worker processes; PostgreSQL only (PGlite runs one transaction at a
 * time). Filled before the describe block's tests, closed after them.
 */
export function workerCopies(harness: () => Harness, serverUrl: string): Deps[] {
  const pools: Db[] = [];
  const copies: Deps[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) pools.push(await openPostgres(serverUrl, { max: 4 }));
    copies.push(harness().deps, ...pools.map((db) => ({ ...harness().deps, db })));
  });
  afterAll(async () => {
    for (const p of pools) await p.close();
  });
  return copies;
}
