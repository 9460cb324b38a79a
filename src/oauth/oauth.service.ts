// OAuth install (C4): authorize -> handoff -> code exchange -> rotating refresh within the grant.
import { randomBytes } from 'node:crypto';
import type { Deps } from '../deps.js';
import type { Tx } from '../db/db.js';
import { safeEqual, sha256Hex } from '../crypto.js';
import { AppError, badRequest, forbidden, notFound, unauthenticated } from '../http/errors.js';
import { randomToken, uuidv7, isUuid } from '../ids.js';
import { findApp, findAppByClientId, type AppRow } from '../apps/apps.repo.js';
import { findStore } from '../accounts/accounts.repo.js';
import { handoffUrl } from './handoff.js';
import { describeRefused } from './scopes.js';
import {
  activateInstallationRow, findInstallation, findInstallationOf, insertPendingInstallation, listStoreInstallations, lockInstallation, markUninstalled, revokeGrant,
  revokeInstallationTokens, type InstallationRow,
} from './installations.repo.js';
import {
  codeInstallation, expireUnusedCodes, hasEarlierGrant, insertAccessToken, insertCode, insertGrant, insertRefreshToken, lockCode, lockRefreshToken, markCodeUsed, refreshTokenInstallation, markRotated, narrowEarlierGrants,
  shareLockApp,
} from './oauth.repo.js';
import { publishRevocation } from './token-cache.js';
import { billingOnInstall } from './billing-on-install.js';
import { chargeClaimedSafely, claimChargeAtUninstall, paidPeriodRunning } from '../billing/charges.js';
import { activateAppFunctions, deactivateAppFunctions } from '../functions/functions.repo.js';

export const CODE_TTL_MS = 10 * 60 * 1000;
export const ACCESS_TTL_S = 24 * 3600;
export const GRANT_TTL_MS = 30 * 24 * 3600 * 1000;

export function installationView(row: InstallationRow, app?: Pick<AppRow, 'name' | 'handle'> | null) {
  return {
    installationId: row.id,
    appId: row.app_id,
    storeId: row.store_id,
    ...(app ? { app: { name: app.name, handle: app.handle } } : {}),
    status: row.status,
    scopes: row.scopes,
    billingStatus: row.billing_status,
    installedVersion: row.installed_version,
    autoUpdate: row.auto_update,
    pinnedVersion: row.pinned_version,
    billingStartDate: row.billing_start_date?.toISOString() ?? null,
    trialEndsAt: row.trial_ends_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** C4.1: the merchant admin asks to install; the answer is the URL to send the browser to. */
export async function authorize(deps: Deps, storeId: string, query: { client_id?: string; scope?: string }) {
  if (!query.client_id) throw badRequest('client_id is required');
  const app = await findAppByClientId(deps.db, query.client_id);
  if (!app) throw badRequest('Unknown client_id');
  const store = await findStore(deps.db, storeId);
  if (!store) throw notFound('Store not found');
  let scopes = app.scopes;
  if (query.scope !== undefined && query.scope.trim() !== '') {
    scopes = [...new Set(query.scope.split(',').map((s) => s.trim()).filter(Boolean))];
    // `scope=,` names no scope: neither "all of the app's" (that is a blank or absent scope) nor an
    // installation the merchant meant to grant nothing, which would answer 403 to every call.
    if (!scopes.length) throw badRequest("scope names no scope: leave it out for all of the app's scopes, or name some of them");
    const extra = scopes.filter((s) => !app.scopes.includes(s));
    if (extra.length) throw badRequest(`scope must be a subset of the app's scopes; not allowed: ${describeRefused(extra)}`);
  }
  const now = deps.clock.now();
  const code = randomToken('svccode', 32);
  const state = randomBytes(24).toString('base64url'); // 192 bits, URL-safe (C4.3)
  const installationId = await deps.db.transaction(async (tx) => {
    await insertPendingInstallation(tx, { id: uuidv7(), app_id: app.id, store_id: storeId, scopes, installed_version: app.version, now });
    // Locked before its codes are touched, as exchange and uninstall lock it (C4.1, C4.6): the
    // insert above takes no lock when the row exists (ON CONFLICT DO NOTHING), so two
    // authorisations at once each expired only the codes committed before them, missed each
    // other's, and both codes worked. Now the second waits for the first and expires its code.
    const installation = (await lockInstallation(tx, (await findInstallationOf(tx, app.id, storeId))!.id))!;
    // C4.1, C4.6: the latest authorisation decides the scopes. A code handed off earlier and not yet
    // exchanged expires now, so an app cannot exchange it after this one and take back scopes the
    // merchant has just withheld (the installation takes the scopes of the code exchanged last).
    await expireUnusedCodes(tx, installation.id, now);
    await insertCode(tx, {
      code_hash: sha256Hex(code), installation_id: installation.id, state, scopes, expires_at: new Date(now.getTime() + CODE_TTL_MS), created_at: now,
    });
    return installation.id;
  });
  const redirectUrl = handoffUrl(app.app_url, deps.secrets.open(app.client_secret_enc), {
    code,
    shop: store.slug,
    state,
    timestamp: String(Math.floor(now.getTime() / 1000)),
  });
  return { redirectUrl, installationId };
}

async function authenticateClient(deps: Deps, body: Record<string, unknown>): Promise<AppRow> {
  const clientId = typeof body.client_id === 'string' ? body.client_id : '';
  const clientSecret = typeof body.client_secret === 'string' ? body.client_secret : '';
  const app = clientId ? await findAppByClientId(deps.db, clientId) : null;
  const expected = app ? deps.secrets.open(app.client_secret_enc) : 'no-such-client-' + randomBytes(16).toString('hex');
  if (!safeEqual(clientSecret, expected) || !app) throw unauthenticated('Unknown client or wrong client secret');
  return app;
}

/**
 * `now` is the request's one instant: the grant's 30 days are counted from it, so a fresh grant says
 * 2592000. The access token lives 24 hours but never past the grant's end (C4.5, app-api.md Token
 * state: then "the merchant must re-authorise"): a refresh shortly before the end gave a token
 * that worked up to 24 hours after it. A code exchange starts a 30-day grant, so it still says
 * 86400 (C4.4); `expires_in` is the token's real lifetime, rounded down.
 */
async function issueTokens(tx: Tx, grant: { id: string; expiresAt: Date; scopes: string[] }, installationId: string, now: Date) {
  const accessToken = randomToken('svcat', 32);
  const refreshToken = randomToken('svcrt', 32);
  const accessEndsMs = Math.min(now.getTime() + ACCESS_TTL_S * 1000, grant.expiresAt.getTime());
  await insertAccessToken(tx, {
    token_hash: sha256Hex(accessToken), grant_id: grant.id, installation_id: installationId, expires_at: new Date(accessEndsMs), created_at: now,
  });
  await insertRefreshToken(tx, { token_hash: sha256Hex(refreshToken), grant_id: grant.id, installation_id: installationId, expires_at: grant.expiresAt, created_at: now });
  return {
    access_token: accessToken,
    refresh_token: refreshToken,
    expires_in: Math.max(0, Math.floor((accessEndsMs - now.getTime()) / 1000)),
    refresh_token_expires_in: Math.max(0, Math.floor((grant.expiresAt.getTime() - now.getTime()) / 1000)),
    scope: grant.scopes.join(','),
    token_type: 'Bearer' as const,
  };
}

/** A refusal that must also commit a revocation: thrown after the transaction has committed. */
class CommittedRefusal {
  constructor(readonly error: AppError, readonly revokedInstallation: string) {}
}

async function runTokenTransaction<T>(deps: Deps, fn: (tx: Tx) => Promise<T | CommittedRefusal>): Promise<T> {
  const result = await deps.db.transaction(fn);
  if (result instanceof CommittedRefusal) {
    deps.tokens.evictInstallation(result.revokedInstallation);
    throw result.error;
  }
  return result;
}

export async function exchangeToken(deps: Deps, body: Record<string, unknown>) {
  const app = await authenticateClient(deps, body);
  if (body.grant_type === 'authorization_code') return exchangeCode(deps, app, body);
  if (body.grant_type === 'refresh_token') return refresh(deps, app, body);
  throw badRequest('grant_type must be authorization_code or refresh_token');
}

async function exchangeCode(deps: Deps, client: AppRow, body: Record<string, unknown>) {
  if (typeof body.code !== 'string' || !body.code) throw badRequest('code is required');
  if (typeof body.state !== 'string' || !body.state) throw badRequest('state is required');
  const codeHash = sha256Hex(body.code);
  const state = body.state;
  const result = await runTokenTransaction(deps, async (tx) => {
    // C3.3: the installation is activated at the app's version as of now. `client` was read before
    // this transaction, so a version PATCH that committed meanwhile (it had moved the still pending
    // installation) was undone by the exchange writing the old version. The app's row is locked
    // first, as the PATCH locks it before the installations, so the two never deadlock.
    const app = await shareLockApp(tx, client.id);
    if (!app) throw unauthenticated('Unknown client or wrong client secret');
    // The installation next, as uninstall locks it (lockInstallation): the two never interleave.
    const installationId = await codeInstallation(tx, codeHash);
    if (installationId) await lockInstallation(tx, installationId);
    const code = await lockCode(tx, codeHash);
    // The code is judged at the instant it is locked, not when the request came in: an uninstall
    // that committed while this waited expired it at its own instant (C4.7), which may be later.
    const now = deps.clock.now();
    if (!code || code.app_id !== app.id) throw badRequest('Invalid authorization code');
    if (code.used_at) {
      // C4.4: a code presented twice was likely intercepted; the tokens issued from it die.
      if (code.grant_id) {
        await revokeGrant(tx, code.grant_id, now);
        await publishRevocation(tx, code.installation_id);
      }
      return new CommittedRefusal(badRequest('Authorization code was already used'), code.installation_id);
    }
    if (code.expires_at.getTime() <= now.getTime()) throw badRequest('Authorization code has expired');
    if (!safeEqual(state, code.state)) throw badRequest('state does not match the authorization request');

    const grant = { id: uuidv7(), expiresAt: new Date(now.getTime() + GRANT_TTL_MS), scopes: code.scopes };
    await insertGrant(tx, { id: grant.id, installation_id: code.installation_id, scopes: code.scopes, created_at: now, expires_at: grant.expiresAt });
    await markCodeUsed(tx, codeHash, grant.id, now);
    await activateInstallation(deps, tx, app, code.installation_id, grant.id, code.scopes, now);
    // C4.6: the installation now has the scopes of this grant; earlier grants keep working but
    // lose any scope the merchant did not grant again. Cached tokens of the installation are
    // dropped everywhere (the NOTIFY) so that they are read again with their narrowed scopes.
    const narrowed = await narrowEarlierGrants(tx, code.installation_id, grant.id, code.scopes);
    if (narrowed > 0) await publishRevocation(tx, code.installation_id);
    return { tokens: await issueTokens(tx, grant, code.installation_id, now), installationId: code.installation_id, narrowed };
  });
  if (result.narrowed > 0) deps.tokens.evictInstallation(result.installationId);
  return result.tokens;
}

async function activateInstallation(deps: Deps, tx: Tx, app: AppRow, installationId: string, grantId: string, scopes: string[], now: Date) {
  const installation = (await findInstallation(tx, installationId))!;
  const becomingActive = installation.status !== 'active';
  // Billing on (re)activation (C10.1): the first install starts the trial; a reinstall while a
  // paid period still runs (`pending_uninstall`) simply resumes it; a reinstall after a full
  // uninstall bills again from now (from the first trial's end while it still runs), with no
  // second trial. An installation removed while still `pending` (authorised, never exchanged) was
  // never installed: its first exchange is the first install, trial included. Every activation
  // makes a grant, so "ever active" is "an earlier grant".
  let billing: { billingStatus: string; trialEndsAt: Date | null; billingStartDate: Date | null } | null = null;
  const firstInstall = installation.status === 'pending'
    || (installation.status === 'uninstalled' && !(await hasEarlierGrant(tx, installationId, grantId)));
  if (firstInstall) billing = billingOnInstall(app.pricing, now);
  else if (installation.status === 'uninstalled') {
    const fresh = billingOnInstall(app.pricing, now);
    const trialRunning = installation.trial_ends_at !== null && installation.trial_ends_at.getTime() > now.getTime();
    // C10.1: billing starts at the end of the trial. A reinstall while the first trial still runs
    // resumes it (no second trial: it ends when the first would have). Before, it was billed from
    // now with the trial's end still shown ahead: the next run charged a full period on trial day 0.
    if (fresh.billingStatus !== 'none' && trialRunning) {
      billing = { billingStatus: 'trialing', trialEndsAt: installation.trial_ends_at, billingStartDate: installation.trial_ends_at };
    } else {
      billing = fresh.billingStatus === 'trialing'
        ? { billingStatus: 'active', trialEndsAt: installation.trial_ends_at, billingStartDate: now }
        : { ...fresh, trialEndsAt: installation.trial_ends_at };
    }
  }
  await activateInstallationRow(tx, installationId, { scopes, becomingActive, version: app.version, billing, now });
  // C11.2: installing (or reinstalling) activates the app's functions on the store.
  if (becomingActive) await activateAppFunctions(tx, app.id, installation.store_id, now);
}

async function refresh(deps: Deps, app: AppRow, body: Record<string, unknown>) {
  if (typeof body.refresh_token !== 'string' || !body.refresh_token) throw badRequest('refresh_token is required');
  const hash = sha256Hex(body.refresh_token);
  const now = deps.clock.now();
  return runTokenTransaction(deps, async (tx) => {
    // The installation first, as an uninstall and a code exchange lock it, then the token: reuse
    // detection revokes every grant and token of the installation, and taken the other way round
    // it deadlocked on PostgreSQL with an uninstall, a code's reuse or another reuse (a 500).
    const installationId = await refreshTokenInstallation(tx, hash);
    if (installationId) await lockInstallation(tx, installationId);
    const token = await lockRefreshToken(tx, hash);
    if (!token || token.app_id !== app.id) throw badRequest('Invalid refresh token');
    // A token revoked already (an uninstall, a reused code, an earlier reuse detection) belongs to
    // a grant that is dead: it is refused, and revokes nothing. Were it taken for a reuse, the
    // tokens a later authorisation gave the app would die with it (docs/decisions.md "OAuth").
    if (token.revoked_at || token.grant_revoked) throw badRequest('Refresh token has been revoked');
    // A grant past its 30 days is over as well (C4.5, Token state): its tokens, rotated ones too, are
    // refused and revoke nothing. Taken for a reuse, a stale rotated token killed the tokens of the
    // merchant's re-authorisation, which the expiry itself required.
    if (token.grant_expires.getTime() <= now.getTime()) throw badRequest('Refresh token has expired; the merchant must re-authorise the app');
    if (token.rotated_at) {
      // C4.5 reuse detection: a rotated refresh token came back, so one of the two copies is
      // stolen; every token of the installation is revoked.
      await revokeInstallationTokens(tx, token.installation_id, now);
      await publishRevocation(tx, token.installation_id);
      return new CommittedRefusal(badRequest('Refresh token was already used; all tokens of this installation are revoked'), token.installation_id);
    }
    if (token.status !== 'active') throw badRequest('Refresh token has been revoked');
    await markRotated(tx, hash, now);
    return issueTokens(tx, { id: token.grant_id, expiresAt: token.grant_expires, scopes: token.scopes }, token.installation_id, now);
  });
}

/** C4.7: tokens die at once; the installation is kept (with its history) as `uninstalled`. */
export async function uninstall(deps: Deps, storeId: string, installationId: string) {
  if (!isUuid(installationId)) throw notFound('Installation not found');
  const now = deps.clock.now();
  const { row, due } = await deps.db.transaction(async (tx) => {
    // Locked first, as a code exchange locks it: an exchange in flight either finishes before this
    // (and its tokens are revoked below) or waits and finds its code expired.
    const installation = await lockInstallation(tx, installationId);
    if (!installation) throw notFound('Installation not found');
    // C7.1: another store's resource is a 403 on the merchant's routes (nothing is touched).
    if (installation.store_id !== storeId) throw forbidden('This resource belongs to another store');
    if (installation.status === 'uninstalled') throw notFound('Installation not found');
    await revokeInstallationTokens(tx, installationId, now);
    // A code handed off before the uninstall must not bring the app back: it expires now too.
    await expireUnusedCodes(tx, installationId, now);
    await publishRevocation(tx, installationId);
    // C10.2: a period that began while the app was active and that the daily job has not charged
    // yet is charged now (claimed here, made through the provider after the commit).
    const due = await claimChargeAtUninstall(deps, tx, installationId, now);
    // C4.7, C10.1: while a paid period runs the app stays `pending_uninstall`; the billing job
    // makes it `uninstalled` when the period ends (C14.12).
    const status = (await paidPeriodRunning(tx, installationId, now)) ? 'pending_uninstall' : 'uninstalled';
    // C11.2: its functions stop running on the store at once, and stay listed.
    await deactivateAppFunctions(tx, installation.app_id, storeId, now);
    return { row: await markUninstalled(tx, installationId, status, now), due };
  });
  deps.tokens.evictInstallation(installationId);
  // A provider that is down leaves the charge pending; the job retries it after its lease.
  if (due) await chargeClaimedSafely(deps, due.txn, due.storeEmail);
  return installationView(row, await findApp(deps.db, row.app_id));
}

export async function listInstallations(deps: Deps, storeId: string, page: { limit: number; offset: number }) {
  const { rows, total } = await listStoreInstallations(deps.db, storeId, page);
  return { installations: rows.map((r) => installationView(r, { name: r.app_name, handle: r.app_handle })), total };
}

/** One installation of the store (the dashboard's uninstall confirmation); another store's is not found. */
export async function storeInstallation(deps: Deps, storeId: string, installationId: string) {
  const row = isUuid(installationId) ? await findInstallation(deps.db, installationId) : null;
  if (!row || row.store_id !== storeId) throw notFound('Installation not found');
  return installationView(row, await findApp(deps.db, row.app_id));
}
