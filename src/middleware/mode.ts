import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { resilient } from '../db/d1';
import { readConfig, type AppEnv, type Bindings, type Config } from '../env';
import { ApiError, unauthorized } from '../lib/errors';
import { publicBaseUrl } from '../lib/public-base-url';
import { copyDisabledToSandbox } from '../services/sandbox/key-makers';

// Test mode (docs/test-mode.md): the prefix of the presented API key names the database a request runs on. A
// `sk_test_` key selects SANDBOX_DB, anything else the live DB; every service then works on `c.var.db` as it always
// does, so the sandbox is the same code on another database. Operator routes, the gateways' webhooks and the
// dashboard are live only.

export type Mode = 'live' | 'test';

declare module 'hono' {
  interface ContextVariableMap {
    /** Which database this request runs on: `test` for a `sk_test_` key (src/middleware/mode.ts). */
    mode: Mode;
  }
}

export const TEST_KEY_PREFIX = 'sk_test_';

/** API paths that never take a test key: the operator's, the gateways' notifications, the account's own recovery. */
const LIVE_ONLY = /^\/api\/v2\/(admin|webhooks|auth)(\/|$)/;

/** The key the request presents (X-API-Key, else `api_key`), as the auth middleware reads it. */
const presentedKey = (c: Context<AppEnv>) => c.req.header('X-API-Key') || c.req.query('api_key') || '';

/** `test` when the request presents a test key on a route that takes one. */
export function requestMode(c: Context<AppEnv>): Mode {
  return !LIVE_ONLY.test(c.req.path) && presentedKey(c).startsWith(TEST_KEY_PREFIX) ? 'test' : 'live';
}

/** The binding a mode runs on; a test key on a service without SANDBOX_DB is not a valid key (401). */
export function bindingFor(env: Bindings, mode: Mode): D1Database {
  if (mode === 'live') return env.DB;
  if (!env.SANDBOX_DB) throw unauthorized('Test mode is not enabled on this service: sk_test_ keys are not accepted.');
  return env.SANDBOX_DB;
}

/** The request's database, wrapped (src/db/d1.ts), for work after the response (events, bookkeeping). */
export const requestDatabase = (c: Context<AppEnv>) => resilient(bindingFor(c.env, c.var.mode ?? 'live'));

/** The sandbox, wrapped, or null when this service has no test mode. */
export const sandboxDatabase = (env: Bindings) => (env.SANDBOX_DB ? resilient(env.SANDBOX_DB) : null);

/** Test-mode routes (`/test/...`) answer only a test key. */
export function requireTestKey(c: Context<AppEnv>): void {
  if (c.var.mode !== 'test') throw new ApiError('TEST_KEY_REQUIRED', 'This route is for test mode: call it with a sk_test_ key.');
}

/** Middleware form of `requireTestKey`, for the `/test/...` API routes. */
export const requireTestKeyRoute = createMiddleware<AppEnv>(async (c, next) => {
  requireTestKey(c);
  await next();
});

/**
 * Where the test gateway's payment page is: the shop's public origin, else the origin the request reached (the link
 * goes back only to the caller that asked for it, in the deposit's answer, never into an email).
 */
function testGatewayBaseUrl(c: Context<AppEnv>): string {
  return publicBaseUrl(c.env) ?? new URL(c.req.url).origin;
}

/** The settings of this request: in test mode, the test gateway serves every slot (src/services/payments/gateways/test.ts). */
export function modeConfig(c: Context<AppEnv>): Config {
  const config = readConfig(c.env);
  return c.var.mode === 'test' ? { ...config, testGateway: { publicBaseUrl: testGatewayBaseUrl(c) } } : config;
}

/**
 * After an operator's change of a user (the admin API's PATCH, the console's Disable/Enable): a change of `disabled`
 * is copied to the sandbox at once, so the user's test keys are refused from their next request too (one sandbox
 * round trip more, for this rare change; the scheduled sweep is the backstop).
 */
export async function disabledAlsoInSandbox<T extends { id: number; disabledAt: string | null }>(
  c: Context<AppEnv>,
  changes: { disabled?: boolean },
  user: T,
): Promise<T> {
  const sandbox = sandboxDatabase(c.env);
  if (sandbox && changes.disabled !== undefined) await copyDisabledToSandbox(sandbox, user.id, user.disabledAt);
  return user;
}
