import { createMiddleware } from 'hono/factory';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from '../env';

/**
 * One structured line per request. It names the route pattern, never the URL: a query string may carry an API key.
 * Nothing from headers or bodies is logged.
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const started = Date.now();
  await next();
  if (c.env.LOG_REQUESTS === 'false') return;
  const route = matchedRoutes(c).findLast((r) => r.method !== 'ALL')?.path ?? 'unmatched';
  const status = c.res.status;
  console.log(
    JSON.stringify({
      level: status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info',
      msg: 'request',
      request_id: c.get('requestId'),
      method: c.req.method,
      route,
      status,
      duration_ms: Date.now() - started,
      user: c.get('principal')?.userId ?? c.get('session')?.userId ?? 'public',
      cache: c.get('cacheStatus') ?? null,
    }),
  );
});
