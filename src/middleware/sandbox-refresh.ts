import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { resilient } from '../db/d1';
import type { AppEnv, Bindings } from '../env';
import { refreshSandboxMirror } from '../services/sandbox/mirror';
import { runAfterResponse } from './after-response';

// "Within a minute of an operator's change": an operator's successful change to the catalogue (the admin API's or
// the console's products, stock and images) refreshes the test-mode sandbox's copy right after its response
// (waitUntil), so the sandbox follows at once; test mode's scheduled run refreshes it as well (src/services/sandbox/jobs.ts), which
// also catches what sales change.

const CATALOGUE_CHANGE = /^(\/api\/v2\/admin|\/dashboard\/console)\/products(\/|$)/;
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A refresh of the sandbox's catalogue now (nothing without a sandbox). */
export function refreshSandboxSoon(env: Bindings): Promise<unknown> {
  return env.SANDBOX_DB ? refreshSandboxMirror(resilient(env.DB), resilient(env.SANDBOX_DB)) : Promise.resolve();
}

/**
 * Whether an operator made this change: the admin API answers below 400 only to its bearer token, but the console
 * answers an anonymous post with a 303 to the sign-in page, so there the session's proof must name an operator. A
 * refused or anonymous request then refreshes nothing (it would let anyone make the server copy the catalogue).
 */
const byOperator = (c: Context<AppEnv>) => c.req.path.startsWith('/api/v2/admin/') || c.var.caller?.proved?.role === 'operator';

export const refreshSandboxAfterCatalogueChange = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (!SAFE.has(c.req.method) && c.res.status < 400 && CATALOGUE_CHANGE.test(c.req.path) && byOperator(c)) runAfterResponse(c, refreshSandboxSoon(c.env));
});
