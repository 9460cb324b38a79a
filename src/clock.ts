// The service's one source of "now" (design.md). Rules read time only through a Clock, so the
// test clock of contract C12.1 can move every expiry, deadline and schedule forward at once.

export interface Clock {
  now(): Date;
  /** Milliseconds since the epoch on this clock. */
  nowMs(): number;
  readonly adjustable: boolean;
}

export class SystemClock implements Clock {
  readonly adjustable = false;
  now(): Date {
    return new Date();
  }
  nowMs(): number {
    return Date.now();
  }
}

/**
 * Real time plus an offset that only grows (C12.1 `POST /apps/admin/clock/advance`). The offset
 * lives in the database when several processes share one (see platform/clock-store.ts), so every
 * process of a deployment agrees on the time; `setOffset` is how that shared value is applied.
 */
export class TestClock implements Clock {
  readonly adjustable = true;
  private offsetMs = 0;

  /**
   * Where the offset is kept in the database. Every process of one deployment uses the default and
   * so shares one clock; tests sharing one database give each service its own key.
   */
  constructor(readonly storageKey = 'test_clock_offset_ms') {}

  now(): Date {
    return new Date(this.nowMs());
  }
  nowMs(): number {
    return Date.now() + this.offsetMs;
  }
  advance(seconds: number): void {
    this.offsetMs += Math.round(seconds * 1000);
  }
  get offset(): number {
    return this.offsetMs;
  }
  setOffset(ms: number): void {
    this.offsetMs = ms;
  }
}
