import { defineConfig } from 'vitest/config';

export default defineConfig({
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
