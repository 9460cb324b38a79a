// The example shipping app's redelivery guard (examples/shipping-app/src/seen-webhooks.ts): webhook
// ids are remembered while the platform may still redeliver them on its own (C8.3), and never more
// than a fixed number, least recently handled forgotten first. On a clock of the test's own.
import { describe, expect, it } from 'vitest';
import { MAX_SEEN_WEBHOOKS, REDELIVERY_WINDOW_MS, SeenWebhooks } from '../examples/shipping-app/src/seen-webhooks.js';

function clock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('the shipping app\'s seen webhook ids', () => {
  it('remembers an id past the last automatic retry (60 + 300 + 900 s, +10 %, and 10 s per failed attempt), then forgets it', () => {
    const lastRetryMs = (10 + 66 + 10 + 330 + 10 + 990) * 1000;
    expect(REDELIVERY_WINDOW_MS).toBeGreaterThan(lastRetryMs);
    const c = clock();
    const seen = new SeenWebhooks({ now: c.now });
    seen.add('w-1');
    c.advance(lastRetryMs);
    expect(seen.has('w-1')).toBe(true);
    // Asking does not extend the window: it runs from when the webhook was handled.
    c.advance(REDELIVERY_WINDOW_MS - lastRetryMs - 1);
    expect(seen.has('w-1')).toBe(true);
    c.advance(1);
    expect(seen.has('w-1')).toBe(false);
    expect(seen.size).toBe(0);
  });

  it('sweeps expired ids as new ones come, so a quiet stream of webhooks keeps only the last window', () => {
    const c = clock();
    const seen = new SeenWebhooks({ now: c.now, windowMs: 60_000 });
    for (let i = 0; i < 1000; i++) {
      seen.add(`w-${i}`);
      c.advance(1000); // one a second: 60 within any window
    }
    expect(seen.size).toBeLessThanOrEqual(60);
    expect(seen.has('w-999')).toBe(true);
    expect(seen.has('w-939')).toBe(false);
  });

  it('never holds more than its cap: the least recently handled is forgotten first', () => {
    const c = clock();
    const seen = new SeenWebhooks({ now: c.now, max: 3 });
    for (const id of ['a', 'b', 'c']) {
      seen.add(id);
      c.advance(1);
    }
    seen.add('a'); // handled again: now the most recent
    c.advance(1);
    seen.add('d');
    expect(seen.size).toBe(3);
    expect(['a', 'b', 'c', 'd'].filter((id) => seen.has(id))).toEqual(['a', 'c', 'd']);
    for (let i = 0; i < 10_000; i++) seen.add(`x-${i}`);
    expect(seen.size).toBe(3);
  });

  it('the default cap holds under a burst far beyond it', () => {
    const seen = new SeenWebhooks({ now: clock().now });
    for (let i = 0; i < MAX_SEEN_WEBHOOKS * 3; i++) seen.add(`w-${i}`);
    expect(seen.size).toBe(MAX_SEEN_WEBHOOKS);
    expect(seen.has(`w-${MAX_SEEN_WEBHOOKS * 3 - 1}`)).toBe(true);
    expect(seen.has(`w-${MAX_SEEN_WEBHOOKS * 2 - 1}`)).toBe(false);
  });

  it('refuses a window or cap that would remember nothing', () => {
    expect(() => new SeenWebhooks({ windowMs: 0 })).toThrow(RangeError);
    expect(() => new SeenWebhooks({ max: 0 })).toThrow(RangeError);
    expect(() => new SeenWebhooks({ max: 1.5 })).toThrow(RangeError);
  });
});
