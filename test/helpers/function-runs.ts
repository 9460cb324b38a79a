// Function runs as the app's developer reads them (C11.5). Runs at a checkout are recorded after
// its answer, in batches (src/functions/run-recorder.ts), so a test waits for them.
import type { Harness } from './harness.js';

/** Waits until the app's run log (of `handle`, or all its functions) holds `n` runs, and returns them, newest first. */
export async function runsOf(h: Harness, s: { app: { appId: string }; partner: { token: string } }, n: number, handle = 'all') {
  for (let i = 0; i < 100; i++) {
    const res = await h.req('GET', `/apps/developer/${s.app.appId}/functions/${handle}/runs?limit=250`, { token: s.partner.token });
    const runs = res.json().data.runs;
    if (runs.length >= n) return runs;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`fewer than ${n} runs recorded`);
}
