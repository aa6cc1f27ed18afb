import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { parseJsonExactly } from '../lib/exact-json';
import { refuseDeepJson } from '../lib/json-depth';

const JSON_TYPE = /^application\/([\w.-]+\+)?json\b/i;

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

/**
 * A JSON body nested too deep is a 422 on every route, refused before any validator, reviver or handler walks it
 * (src/lib/json-depth.ts), even on a route that ignores its body. Registered after the credential middleware, so a
 * bad key or token still answers 401 first.
 */
export const refuseDeepJsonBodies = createMiddleware<AppEnv>(async (c, next) => {
  if (JSON_TYPE.test(c.req.header('Content-Type') ?? '')) refuseDeepJson(await c.req.text());
  await next();
});
