import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { authenticateApiKey } from '../services/api-keys';
import { timingSafeEqualStrings } from '../lib/crypto';
import { unauthorized } from '../lib/errors';
import { enforceRateLimit } from './rate-limit';

/** X-API-Key header, else the `api_key` query parameter (the header wins when both are sent). */
export const requireApiKey = createMiddleware<AppEnv>(async (c, next) => {
  const presented = c.req.header('X-API-Key') || c.req.query('api_key');
  if (!presented) throw unauthorized();
  const principal = await authenticateApiKey(c.env.DB, presented);
  if (!principal) throw unauthorized('The API key is invalid or has been revoked.');
  c.set('principal', { userId: principal.userId, apiKeyId: principal.apiKeyId });
  await enforceRateLimit(c.env.API_KEY_RATE_LIMITER, `key:${principal.apiKeyId}`);
  if (principal.touch) runAfterResponse(c, principal.touch());
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

/** Work that must not delay the response (waitUntil), its failure logged. */
export function runAfterResponse(c: { executionCtx: { waitUntil(p: Promise<unknown>): void } }, work: Promise<unknown>) {
  const settled = work.catch((err) => console.error(JSON.stringify({ level: 'error', msg: 'background task failed', error: String(err) })));
  try {
    c.executionCtx.waitUntil(settled);
  } catch {
    // no execution context (app.request in unit tests): the promise still runs to completion
  }
}
