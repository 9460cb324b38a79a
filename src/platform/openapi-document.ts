// The OpenAPI document as the code describes it, built without listening: a real runtime on an
// in-memory embedded database (the routes need their dependencies, not data). `npm run openapi`
// writes it to docs/openapi.json; test/openapi-document.test.ts fails when the two differ, so every
// API change shows up in review (issue 11), and the app SDK builds its client from the file.
import { loadConfig } from '../config.js';
import { startRuntime } from '../runtime.js';
import { buildApp } from '../app.js';
import { openPGlite } from '../db/pglite.js';
import { silentLogger } from './logger.js';

export const OPENAPI_DOCUMENT_PATH = 'docs/openapi.json';

export async function buildOpenapiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig(
    { NODE_ENV: 'test', SVC_SECRET: 'openapi-document-secret-0123456789abcdef', SVC_SEED: 'none', SVC_DATA_DIR: '/nonexistent-openapi' },
    { persistSecret: false },
  );
  const runtime = await startRuntime(config, { db: await openPGlite({}), log: silentLogger() });
  try {
    const app = await buildApp(runtime.deps, { docsUi: false });
    await app.ready();
    const document = app.swagger() as unknown as Record<string, unknown>;
    await app.close();
    return document;
  } finally {
    await runtime.close();
  }
}

/** Stable text: two-space JSON with a final newline, as committed. */
export const documentText = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;
