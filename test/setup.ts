import { applyD1Migrations, env } from 'cloudflare:test';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { network } from './network';

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
// The test-mode database (wrangler.toml's SANDBOX_DB), migrated alike.
if (env.SANDBOX_DB) await applyD1Migrations(env.SANDBOX_DB, env.TEST_MIGRATIONS);

beforeAll(() => network.listen({ onUnhandledRequest: 'error' }));
afterEach(() => network.resetHandlers());
afterAll(() => network.close());
