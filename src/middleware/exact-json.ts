import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { parseJsonExactly } from '../lib/exact-json';

/**
 * Every JSON body of the API is read by `c.req.json()` (the zod-openapi validators, and the few handlers that read
 * a body themselves). Hono parses it with a plain JSON.parse; this puts the parse that keeps a number's digits as
 * written (src/lib/exact-json.ts) in its place, once, for every route. Malformed JSON still throws, and the
 * validators still turn that into the same 422.
 */
export const exactJsonBodies = createMiddleware<AppEnv>(async (c, next) => {
  c.req.json = (async () => parseJsonExactly(await c.req.text())) as typeof c.req.json;
  await next();
});
