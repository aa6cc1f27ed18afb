import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { sha256Hex, timingSafeEqualStrings } from '../lib/crypto';
import { ApiError, unauthorized } from '../lib/errors';
import { apiKeyCaller, readAs, type Caller } from '../services/caller';
import { API_KEY_SHAPE, touchApiKey } from '../services/accounts/keys';
import { lastSeenStatement } from '../services/accounts/sessions';
import { enforceRateLimit } from './rate-limit';
import { runAfterResponse } from './after-response';
import { renderError } from './render-error';
import { requestDatabase } from './mode';
import type { Scope } from '../lib/scopes';

// `c.var.caller` on every route: declared here, where the API key middleware sets it (the dashboard's session
// middleware sets it too), rather than in src/env.ts, which names no service type.
declare module 'hono' {
  interface ContextVariableMap {
    /** Who the request acts for (an API key, or a dashboard session), proved inside its own D1 batch (src/services/caller.ts). */
    caller: Caller;
  }
}

/**
 * X-API-Key header, else the `api_key` query parameter (the header wins when both are sent). Nothing is looked up
 * here: the key's hash becomes the request's `caller`, proved by the first statement of the request's own D1 batch
 * (src/services/caller.ts). The rate limit counts per key hash, before any D1 call.
 */
export const requireApiKey = createMiddleware<AppEnv>(async (c, next) => {
  const presented = c.req.header('X-API-Key') || c.req.query('api_key');
  if (!presented) throw unauthorized();
  if (!API_KEY_SHAPE.test(presented)) throw unauthorized('The API key is invalid or has been revoked.');
  const keyHash = await sha256Hex(presented);
  await enforceRateLimit(c.env.API_KEY_RATE_LIMITER, `key:${keyHash}`);
  const caller = apiKeyCaller(keyHash, c.req.header('CF-Connecting-IP'));
  caller.place = c.var.place;
  c.set('caller', caller);
  await next();
  // A request refused before its batch ran (invalid fields, unknown route...) has not proved its key: a bad key must
  // still answer 401, so the refusal pays for one proof read. Successes never do.
  if (!caller.proved && !caller.refused && c.res.status >= 400 && c.res.status < 500 && ![401, 429].includes(c.res.status)) {
    await readAs(c.var.db, caller, []).catch((err) => {
      // A live key refused here (scope, address) keeps the answer it got: an unknown route stays a 404.
      if (caller.refused) return;
      if (!(err instanceof ApiError && err.code === 'UNAUTHORIZED')) throw err;
      c.res = undefined;
      c.res = renderError(err, c);
    });
  }
  // last_used_at is bookkeeping: written after the response, at most once a minute per key.
  // With it, where its user was last seen (the console's user page; live accounts only), at the same pace.
  const seen = caller.proved && c.var.mode !== 'test' ? [lastSeenStatement(caller.proved.userId, c.var.place)] : [];
  const touch = caller.proved && touchApiKey(requestDatabase(c), keyHash, caller.proved.lastUsedAt, seen);
  if (touch) runAfterResponse(c, touch);
});

/**
 * The scope a route needs, set on the request's caller before the handler builds its batch (see `needsScope` in
 * src/routes/openapi.ts, where each route declares it). A route that declares none needs every scope.
 */
export const requireScope = (scope: Scope) =>
  createMiddleware<AppEnv>(async (c, next) => {
    c.var.caller.requiredScope = scope;
    await next();
  });

/** Operator routes: `Authorization: Bearer <ADMIN_TOKEN>`; without a configured token nothing gets in. */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.env.ADMIN_TOKEN;
  const header = c.req.header('Authorization') ?? '';
  const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
  if (!expected || !token || !(await timingSafeEqualStrings(token, expected))) {
    throw unauthorized('A valid admin bearer token is required.');
  }
  await next();
});
