// Piscina loads this plain-JavaScript file in each worker thread. The runtime is TypeScript run
// directly (`node --import tsx`, vitest), and a worker does not always inherit the parent's loader
// (vitest's forks do not), so the TypeScript task is imported through tsx's scoped import. A build
// that ships compiled JavaScript (the app SDK) has worker.js beside this file and uses it instead.
import { existsSync } from 'node:fs';

const compiled = new URL('./worker.js', import.meta.url);
const mod = existsSync(compiled)
  ? await import(compiled.href)
  : await (await import('tsx/esm/api')).tsImport('./worker.ts', import.meta.url);

export default mod.default;
