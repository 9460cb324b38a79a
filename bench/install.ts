// The OAuth install the bench data uses, through the real services: the merchant approves, the app
// exchanges the handed-off code (as src/seed/seed.ts does). Returns the access token.
import type { Deps } from '../src/deps.js';
import { authorize, exchangeToken } from '../src/oauth/oauth.service.js';

export async function installForBench(deps: Deps, storeId: string, clientId: string, clientSecret: string): Promise<string> {
  const { redirectUrl } = await authorize(deps, storeId, { client_id: clientId });
  const handoff = new URL(redirectUrl).searchParams;
  const tokens = await exchangeToken(deps, {
    client_id: clientId, client_secret: clientSecret, grant_type: 'authorization_code', code: handoff.get('code'), state: handoff.get('state'),
  });
  return tokens.access_token;
}
