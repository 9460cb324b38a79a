import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests import the SDK by its package name (the example app does) from its sources, as the
  // service's own `--conditions=svc-source` runs do: its dist/ is built only by `npm pack`, so
  // without this a test file importing `@svc/app-sdk` failed to load unless the package test had
  // happened to build dist/ first in the same run.
  // The rest are Vite's own server conditions (its `defaultServerConditions`), which a list given here replaces.
  ssr: { resolve: { conditions: ['svc-source', 'module', 'node', 'development|production'] } },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // After each test file, passed or failed: leftover service processes and temporary directories go.
    setupFiles: ['test/helpers/file-teardown.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: two files at a time keeps PGlite start-up and the HTTP tests from starving each other.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
