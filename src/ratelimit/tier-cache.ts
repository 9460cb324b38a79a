// An app's rate-limit tier, cached 60 s on the service clock (app-api.md Limits 4): a tier change
// on the dashboard reaches the limiter within a minute, without a query per request.
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/db.js';
import { TIER_LIMITS, type Tier } from './limiter.js';

export const TIER_CACHE_MS = 60_000;

export class TierCache {
  private readonly entries = new Map<string, { limit: number; until: number }>();

  constructor(private readonly db: Queryable, private readonly clock: Clock) {}

  /** Requests per second allowed for the app (a number when cached, else a promise). */
  limitFor(appId: string): number | Promise<number> {
    const hit = this.entries.get(appId);
    if (hit && hit.until > this.clock.nowMs()) return hit.limit;
    return this.load(appId);
  }

  private async load(appId: string): Promise<number> {
    const { rows } = await this.db.query<{ tier: Tier }>('SELECT tier FROM apps WHERE id = $1', [appId]);
    const limit = TIER_LIMITS[rows[0]?.tier ?? 'free'];
    if (this.entries.size > 50_000) this.entries.clear();
    this.entries.set(appId, { limit, until: this.clock.nowMs() + TIER_CACHE_MS });
    return limit;
  }
}
