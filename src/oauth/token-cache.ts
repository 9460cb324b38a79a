// Access-token look-ups on the App API's hot path. A token is hashed and found once, then kept in
// memory; revocation must still take effect at once in every process (C4.7), so each revocation is
// published with NOTIFY in the revoking transaction (delivered on commit) and every process evicts
// the installation's entries when it hears it. The revoking process also evicts locally before it
// answers. A TTL bounds how long an entry lives even if a notification were ever missed.
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import { sha256Hex } from '../crypto.js';

export const REVOCATION_CHANNEL = 'svc_token_revocations';

export interface TokenInfo {
  installationId: string;
  appId: string;
  storeId: string;
  scopes: string[];
  expiresAtMs: number;
}

interface Entry {
  info: TokenInfo;
  cachedUntilMs: number;
}

export class AccessTokenCache {
  private readonly entries = new Map<string, Entry>();
  private readonly byInstallation = new Map<string, Set<string>>();
  private unsubscribe: (() => Promise<void>) | null = null;
  /**
   * Counts evictions. A look-up whose query ran before a revocation committed can return after the
   * revocation's eviction; caching that row would bring the revoked token back for the TTL. A
   * look-up caches its row only if no eviction happened while it was in flight (any installation's:
   * the row's installation is not known before the query, and revocations are rare).
   */
  private evictions = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly options: { ttlMs?: number; maxEntries?: number } = {},
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.db.listen(REVOCATION_CHANNEL, (installationId) => this.evictInstallation(installationId));
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /**
   * The live token's installation, or null when unknown, revoked or expired. Answers without a
   * promise when the token is cached (the App API gate's fast path).
   */
  lookup(token: string): TokenInfo | null | Promise<TokenInfo | null> {
    const hash = sha256Hex(token);
    const hit = this.entries.get(hash);
    if (hit && hit.cachedUntilMs > Date.now()) return hit.info.expiresAtMs > this.clock.nowMs() ? hit.info : null;
    return this.load(hash);
  }

  private async load(hash: string): Promise<TokenInfo | null> {
    const now = this.clock.nowMs();
    const evictionsBefore = this.evictions;

    const { rows } = await this.db.query<{ installation_id: string; app_id: string; store_id: string; scopes: string[]; expires_at: Date }>(
      `SELECT t.installation_id, i.app_id, i.store_id, g.scopes, t.expires_at
         FROM access_tokens t
         JOIN oauth_grants g ON g.id = t.grant_id
         JOIN installations i ON i.id = t.installation_id
        WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND g.revoked_at IS NULL AND i.status = 'active'`,
      [hash],
      { name: 'access_token_lookup' },
    );
    const row = rows[0];
    if (!row) {
      this.forget(hash);
      return null;
    }
    const info: TokenInfo = {
      installationId: row.installation_id,
      appId: row.app_id,
      storeId: row.store_id,
      scopes: row.scopes,
      expiresAtMs: row.expires_at.getTime(),
    };
    // The row was read before any eviction since: the request that asked may use it (it began
    // before the revocation), but it is not kept for the requests after.
    if (this.evictions === evictionsBefore) this.remember(hash, info);
    return info.expiresAtMs > now ? info : null;
  }

  evictInstallation(installationId: string): void {
    this.evictions++;
    const hashes = this.byInstallation.get(installationId);
    if (!hashes) return;
    for (const hash of hashes) this.entries.delete(hash);
    this.byInstallation.delete(installationId);
  }

  private remember(hash: string, info: TokenInfo) {
    if (this.entries.size >= (this.options.maxEntries ?? 100_000)) {
      const oldest = this.entries.keys().next().value;
      if (oldest) this.forget(oldest);
    }
    this.entries.set(hash, { info, cachedUntilMs: Date.now() + (this.options.ttlMs ?? 30_000) });
    let set = this.byInstallation.get(info.installationId);
    if (!set) this.byInstallation.set(info.installationId, (set = new Set()));
    set.add(hash);
  }

  private forget(hash: string) {
    const entry = this.entries.get(hash);
    if (!entry) return;
    this.entries.delete(hash);
    this.byInstallation.get(entry.info.installationId)?.delete(hash);
  }
}

/** Call inside the revoking transaction: the notification goes out when it commits. */
export async function publishRevocation(tx: Queryable, installationId: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [REVOCATION_CHANNEL, installationId]);
}
