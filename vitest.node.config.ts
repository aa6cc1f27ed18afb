import { defineConfig } from 'vitest/config';

// Tests that read the repository itself (the layering of src/): plain Node, no worker, no server.
export default defineConfig({
  test: {
    include: ['test/node/**/*.test.ts'],
    environment: 'node',
  },
});
