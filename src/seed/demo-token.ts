// An access token for the demo app on the demo store, through the same install flow an app goes
// through (C4.1 authorize, C4.4 code exchange): used when the demo is loaded and on each later
// development start, for the banner.
import type { Deps } from '../deps.js';
import { authorize, exchangeToken } from '../oauth/oauth.service.js';

export async function demoAccessToken(deps: Deps, app: { storeId: string; clientId: string; clientSecret: string; scope?: string }): Promise<string> {
  const { redirectUrl } = await authorize(deps, app.storeId, { client_id: app.clientId, scope: app.scope });
  const handoff = new URL(redirectUrl).searchParams;
  const tokens = await exchangeToken(deps, {
    client_id: app.clientId,
    client_secret: app.clientSecret,
    grant_type: 'authorization_code',
    code: handoff.get('code'),
    state: handoff.get('state'),
  });
  return tokens.access_token;
}
