import { createMiddleware } from 'hono/factory';
import { HTTPException } from 'hono/http-exception';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * An unsafe request (a POST...) only from the service's own pages: its `Origin` is the service's own, or it carries
 * `Sec-Fetch-Site: same-origin`; anything else is a 403 before the handler runs. Hono's `csrf()` checks the same two
 * headers but only for form content types (and body-less posts): a page on another site can still `fetch()` a JSON
 * post to a route that needs no cookie (the local checkout), so this applies whatever the Content-Type.
 */
export const sameOriginOnly = createMiddleware(async (c, next) => {
  if (!SAFE_METHODS.has(c.req.method)) {
    const sameOrigin = c.req.header('Sec-Fetch-Site') === 'same-origin' || c.req.header('Origin') === new URL(c.req.url).origin;
    if (!sameOrigin) throw new HTTPException(403, { res: new Response('Forbidden', { status: 403 }) });
  }
  await next();
});
