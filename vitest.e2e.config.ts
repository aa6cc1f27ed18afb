import { defineConfig } from 'vitest/config';

// Browser tests: plain Node, driving `npm run dev` and Debian's Chromium through playwright-core.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
