// An access token for the demo app on the demo store, through the same install flow an app goes
// through (C4.1 authorize, C4.4 code exchange): used when the demo is loaded and on each later
// development start, for the banner.
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { authorize, exchangeToken } from '../oauth/oauth.service.js';

/**
 * Tries of the flow: a deployment's processes starting together each print the banner, and a new
 * authorisation expires the code of one handed off before it (C4.6), so another process's authorize
 * between this one's authorize and exchange makes its code "expired". Asked again, it gets a code of
 * its own.
 */
const TRIES = 5;

export async function demoAccessToken(deps: Deps, app: { storeId: string; clientId: string; clientSecret: string; scope?: string }): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const { redirectUrl } = await authorize(deps, app.storeId, { client_id: app.clientId, scope: app.scope });
    const handoff = new URL(redirectUrl).searchParams;
    try {
      const tokens = await exchangeToken(deps, {
        client_id: app.clientId,
        client_secret: app.clientSecret,
        grant_type: 'authorization_code',
        code: handoff.get('code'),
        state: handoff.get('state'),
      });
      return tokens.access_token;
    } catch (err) {
      const expiredByAnother = err instanceof AppError && err.status === 400 && /has expired/.test(err.message);
      if (!expiredByAnother || attempt >= TRIES) throw err;
    }
  }
}
