// `npm run openapi`: write the OpenAPI document the code describes to docs/openapi.json.
import { writeFileSync } from 'node:fs';
import { buildOpenapiDocument, documentText, OPENAPI_DOCUMENT_PATH } from '../src/platform/openapi-document.js';

writeFileSync(OPENAPI_DOCUMENT_PATH, documentText(await buildOpenapiDocument()));
console.log(`wrote ${OPENAPI_DOCUMENT_PATH}`);
