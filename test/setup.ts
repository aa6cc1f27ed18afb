import { applyD1Migrations, env } from 'cloudflare:test';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { network } from './network';

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

beforeAll(() => network.listen({ onUnhandledRequest: 'error' }));
afterEach(() => network.resetHandlers());
afterAll(() => network.close());
