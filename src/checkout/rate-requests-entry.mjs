// The shipping rate requests' thread (rate-requests.ts) starts here. The service runs its
// TypeScript directly (`node --import tsx`, vitest), and a worker thread does not always inherit
// the parent's loader (vitest's forks do not), so the thread's TypeScript is imported through tsx's
// scoped import, as the functions runtime's fallback does (src/functions/runtime/worker-entry.mjs).
// `preload` (RateThreadOptions): modules imported first, in order (tests).
import { workerData } from 'node:worker_threads';

const { tsImport } = await import('tsx/esm/api');
for (const module of workerData?.preload ?? []) await tsImport(module, import.meta.url);
await tsImport('./rate-requests.worker.ts', import.meta.url);
