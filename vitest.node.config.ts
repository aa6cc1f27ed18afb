import { defineConfig } from 'vitest/config';
import { reporters } from './test/node/quiet-output.js';

// Tests that read the repository itself (the layering of src/): plain Node, no worker, no server.
export default defineConfig({
  test: {
    include: ['test/node/**/*.test.ts'],
    environment: 'node',
    // One line per failed file, none per passing one (test/node/quiet-output.ts).
    reporters: reporters(),
  },
});
