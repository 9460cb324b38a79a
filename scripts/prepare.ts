// `npm ci` / `npm install` run this (`prepare`): build the embedded-database template. A failure
// here must not fail the install; the service then runs initdb on its first start instead.
import { buildTemplate } from '../src/db/pglite-template.js';

try {
  const dir = await buildTemplate();
  console.log(`embedded database template ready: ${dir}`);
} catch (err) {
  console.warn('could not build the embedded database template (first start will run initdb):', err);
}
