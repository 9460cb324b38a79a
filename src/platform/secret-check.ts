// C1.2 SVC_SECRET: a process must hold the secret that sealed the app client secrets its database
// holds. With another one (a mistyped or changed SVC_SECRET, a development data dir removed while
// its PostgreSQL database was kept, one process of a deployment given a different value) every
// OAuth exchange, webhook signature and the demo banner failed later, each as a 500 or a stack
// trace; now the start is refused, naming the variable. A sealed check value kept in
// platform_settings proves the match; a database from before the check proves it with one of
// its apps' sealed secrets before the check value is written.
import type { Db } from '../db/db.js';
import type { SecretBox } from '../crypto.js';
import { ConfigError, type Config } from '../config.js';
import { codePoints } from '../text.js';

const CHECK_KEY = 'secret_check';
const CHECK_TEXT = 'svc-secret-check';

const opens = (secrets: SecretBox, sealed: string, expected?: string): boolean => {
  try {
    const plain = secrets.open(sealed);
    return expected === undefined || plain === expected;
  } catch {
    return false;
  }
};

export async function checkSecret(db: Db, secrets: SecretBox, config: Config): Promise<void> {
  const kept = await db.query<{ value: string }>('SELECT value FROM platform_settings WHERE key = $1', [CHECK_KEY]);
  let matches: boolean;
  if (kept.rows[0]) {
    matches = opens(secrets, kept.rows[0].value, CHECK_TEXT);
  } else {
    const app = await db.query<{ client_secret_enc: string }>('SELECT client_secret_enc FROM apps ORDER BY created_at, id LIMIT 1');
    matches = !app.rows[0] || opens(secrets, app.rows[0].client_secret_enc);
    if (matches) {
      // Processes starting together may each write one: the first stays, and is checked by all.
      await db.query('INSERT INTO platform_settings (key, value) VALUES ($1, to_jsonb($2::text)) ON CONFLICT (key) DO NOTHING', [CHECK_KEY, secrets.seal(CHECK_TEXT)]);
      const now = await db.query<{ value: string }>('SELECT value FROM platform_settings WHERE key = $1', [CHECK_KEY]);
      matches = opens(secrets, now.rows[0].value, CHECK_TEXT);
    }
  }
  if (matches) return;
  const reason = 'does not open the app secrets this database holds: they were sealed with another secret; every process of a deployment needs the secret the database was first used with';
  throw new ConfigError([
    config.secretSource === 'env'
      ? `SVC_SECRET=(hidden, ${codePoints(config.secret)} characters): ${reason}`
      : `SVC_SECRET is not set: the development secret kept in ${config.dataDir} ${reason} (set SVC_SECRET to it, or use an empty database)`,
  ]);
}
