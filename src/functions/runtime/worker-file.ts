// Which file piscina loads in each worker. Worker start-up matters here: every run stopped at its
// deadline costs a worker, and its replacement's start-up is CPU the checkout shares. Loading the
// TypeScript through tsx in each worker takes 400-900 ms (its loader thread, then @bufbuild/cel's
// files one by one through the hooks); one pre-bundled JavaScript file takes about 130 ms. So:
// 1. a compiled build (the app SDK) has worker.js beside this file: that;
// 2. otherwise the worker is bundled once per process with esbuild (the bundler tsx itself runs
//    on) into node_modules/.cache (where build tools keep their output; not the temp dir, which
//    the test run keeps clean), named by its content's hash;
// 3. if that fails, worker-entry.mjs, which loads worker.ts through tsx.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

let chosen: string | null = null;

export function workerFile(): string {
  chosen ??= pick();
  return chosen;
}

function pick(): string {
  const compiled = new URL('./worker.js', import.meta.url);
  if (existsSync(compiled)) return compiled.href;
  try {
    return bundle();
  } catch {
    return new URL('./worker-entry.mjs', import.meta.url).href;
  }
}

function bundle(): string {
  const require = createRequire(import.meta.url);
  const esbuild = require('esbuild') as typeof import('esbuild');
  const result = esbuild.buildSync({
    entryPoints: [fileURLToPath(new URL('./worker.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
    // CommonJS packages in an ES module bundle need a real `require` for node built-ins.
    banner: { js: "import { createRequire as __fnCreateRequire } from 'node:module'; const require = __fnCreateRequire(import.meta.url);" },
  });
  const code = result.outputFiles[0].contents;
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const file = join(cacheDir(dirname(dirname(require.resolve('esbuild/package.json')))), `function-worker-${hash}.mjs`);
  if (!existsSync(file)) {
    // Written aside and renamed: another process may be writing the same file.
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, code);
    renameSync(partial, file);
  }
  return pathToFileURL(file).href;
}

function cacheDir(nodeModules: string): string {
  for (const dir of [join(nodeModules, '.cache', 'svc-function-runtime'), join(tmpdir(), 'svc-function-runtime')]) {
    try {
      mkdirSync(dir, { recursive: true });
      return dir;
    } catch {
      // read-only install: the next place
    }
  }
  throw new Error('no writable directory for the function worker bundle');
}
