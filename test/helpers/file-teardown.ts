// Vitest setup file: runs inside every test file, and its afterAll runs after the file's own ones,
// whether the file passed or failed. A service a failed test left running is stopped first (it
// holds its data dir), then the file's temporary directories go.
import { afterAll } from 'vitest';
import { stopServices } from './process.js';
import { removeTempDirs } from './temp-dirs.js';

afterAll(async () => {
  await stopServices();
  removeTempDirs();
});
