// `npm run sdk:types`: regenerate the app SDK's REST types (packages/app-sdk/src/generated/openapi.ts)
// from the committed OpenAPI document, with openapi-typescript. Run it after `npm run openapi`;
// test/app-sdk-client.test.ts fails while the committed types lag behind docs/openapi.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

const ROOT = join(fileURLToPath(import.meta.url), '../..');
export const SDK_TYPES_PATH = 'packages/app-sdk/src/generated/openapi.ts';

/** The types file's text for the document at `docs/openapi.json` (from the repository root). */
export async function sdkTypesText(root: string = ROOT): Promise<string> {
  const document = JSON.parse(readFileSync(join(root, 'docs/openapi.json'), 'utf8'));
  return `${COMMENT_HEADER}${astToString(await openapiTS(document, { silent: true }))}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(join(ROOT, SDK_TYPES_PATH), await sdkTypesText());
  console.log(`wrote ${SDK_TYPES_PATH}`);
}
