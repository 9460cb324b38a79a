// Runs the example shipping app. Configuration from the environment:
//   PLATFORM_URL   the platform's base URL (default http://localhost:3000)
//   CLIENT_ID, CLIENT_SECRET, APP_HANDLE   from the developer API when the app was registered
//   PORT (default 4000), PUBLIC_URL (default http://localhost:PORT), TOKENS_FILE (default ./tokens.json)
import { FileTokenStore, TokenKeeper } from '@svc/app-sdk';
import { createShippingApp } from './app.js';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] || fallback;
  if (value === undefined) {
    console.error(`${name} is required (see examples/shipping-app/README.md)`);
    process.exit(2);
  }
  return value;
};

const port = Number(env('PORT', '4000'));
const app = { baseUrl: env('PLATFORM_URL', 'http://localhost:3000'), clientId: env('CLIENT_ID'), clientSecret: env('CLIENT_SECRET') };
const keeper = new TokenKeeper(app, new FileTokenStore(env('TOKENS_FILE', 'tokens.json')));
const server = createShippingApp({ app, handle: env('APP_HANDLE'), publicUrl: env('PUBLIC_URL', `http://localhost:${port}`), keeper });

// Every interface by default, so `localhost` reaches it over IPv4 and IPv6 alike; HOST narrows it.
server.listen(port, process.env.HOST || undefined, () => console.log(`example shipping app listening on http://localhost:${port}`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => server.close(() => process.exit(0)));
