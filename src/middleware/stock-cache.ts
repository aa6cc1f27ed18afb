import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { readConfig, type AppEnv } from '../env';

// Public stock responses live in the Workers Cache API for STOCK_CACHE_SECONDS: a hit answers without touching D1.
// The cache is per data centre; a change purges the entries it affects in the data centre that made it, and
// elsewhere entries expire within STOCK_CACHE_SECONDS (the lag the contract allows). `/stock/check` URLs are not
// enumerable, so they always just expire.

const STOCK_PREFIX = '/api/v2/stock';

const cacheKey = (url: string) => new Request(url, { method: 'GET' });

function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}

export const stockCache = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== 'GET' || readConfig(c.env).stockCacheSeconds === 0) {
    c.set('cacheStatus', 'bypass');
    return next();
  }
  const key = cacheKey(c.req.url);
  const hit = await caches.default.match(key);
  if (hit) {
    c.set('cacheStatus', 'hit');
    const etag = hit.headers.get('ETag');
    if (etag && matchesIfNoneMatch(c.req.header('If-None-Match'), etag)) {
      const headers = new Headers();
      for (const name of ['ETag', 'Cache-Control', 'Access-Control-Allow-Origin', 'Vary']) {
        const value = hit.headers.get(name);
        if (value) headers.set(name, value);
      }
      return new Response(null, { status: 304, headers });
    }
    return new Response(hit.body, hit);
  }
  c.set('cacheStatus', 'miss');
  await next();
  if (c.res.status === 200) {
    const stored = caches.default.put(key, c.res.clone());
    try {
      c.executionCtx.waitUntil(stored);
    } catch {
      await stored; // no execution context (app.request in tests)
    }
  }
});

/** Drop the cached public entries a change to these products affects (in this data centre). */
export async function purgeStock(c: Context<AppEnv>, productIds: number[]): Promise<void> {
  if (readConfig(c.env).stockCacheSeconds === 0) return;
  const origin = new URL(c.req.url).origin;
  const paths = [STOCK_PREFIX, `${STOCK_PREFIX}/categories`, ...productIds.flatMap((id) => [`${STOCK_PREFIX}/${id}`, `${STOCK_PREFIX}/${id}/badge.svg`])];
  await Promise.all(paths.map((path) => caches.default.delete(cacheKey(`${origin}${path}`))));
}
