import { defineConfig } from 'vitest/config';
import { reporters } from './test/node/quiet-output.js';

// Tests from outside the worker: plain Node against `npm run dev` (one server for all files, started in
// global-setup), with Debian's Chromium driven through playwright-core for the browser ones.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.test.ts'],
    environment: 'node',
    // One line per failed file, none per passing one (test/node/quiet-output.ts).
    reporters: reporters(),
    globalSetup: ['test/e2e/global-setup.ts'],
    testTimeout: 60_000,
    // As in vitest.config.ts: a passing test's output is not printed; a failing one's is.
    silent: 'passed-only',
    slowTestThreshold: 30_000,
    hookTimeout: 180_000,
  },
});
