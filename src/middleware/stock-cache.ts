import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { readConfig, type AppEnv } from '../env';

// Public catalogue responses (/api/v2/stock*, the storefront /shop, the embeddable cards /embed/products/{id}) live
// in the Workers Cache API for STOCK_CACHE_SECONDS: a hit answers without touching D1. The cache is per data centre;
// a change purges the entries it affects in the data centre that made it, and elsewhere entries expire within
// STOCK_CACHE_SECONDS (the lag the contract allows). URLs with a query (`/stock/check`) are not enumerable, so they
// always just expire.
//
// What a change purges: a sale (purchase, cancel) only the sold product's own entries, so a drop never empties the
// lists a storefront polls (they lag sales by at most STOCK_CACHE_SECONDS, and each poll stays a cache hit while
// the database is busiest); an operator's change to the catalogue (product, price, stock, image) everything.

const STOCK_PREFIX = '/api/v2/stock';
const LISTS = [STOCK_PREFIX, `${STOCK_PREFIX}/categories`, '/shop'];
const productPaths = (id: number) => [`${STOCK_PREFIX}/${id}`, `${STOCK_PREFIX}/${id}/badge.svg`, `/embed/products/${id}`, `/shop/${id}`];

const cacheKey = (url: string) => new Request(url, { method: 'GET' });

function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}

export const stockCache = createMiddleware<AppEnv>(async (c, next) => {
  // A test key's request reads the sandbox (src/middleware/mode.ts): never cached, never served from the cache.
  if (c.req.method !== 'GET' || readConfig(c.env).stockCacheSeconds === 0 || c.var.mode === 'test') {
    c.set('cacheStatus', 'bypass');
    return next();
  }
  const key = cacheKey(c.req.url);
  const hit = await caches.default.match(key);
  if (hit) {
    c.set('cacheStatus', 'hit');
    return answerFrom(hit, c.req.header('If-None-Match'));
  }
  // Requests that miss while another request of this isolate renders the same URL share its answer: when an entry
  // expires under storefronts polling it, one read of the database refills it instead of one per poll in flight.
  // No await between this look-up and taking the lead below, so requests that missed together cannot all take it.
  const leader = rendering.get(c.req.url);
  const shared = leader ? await leader : null;
  if (shared) {
    c.set('cacheStatus', 'hit');
    return answerFrom(responseOf(shared), c.req.header('If-None-Match'));
  }
  c.set('cacheStatus', 'miss');
  let done: (answer: Rendered | null) => void = () => {};
  const mine = new Promise<Rendered | null>((resolve) => (done = resolve));
  rendering.set(c.req.url, mine);
  const release = () => rendering.get(c.req.url) === mine && rendering.delete(c.req.url);
  try {
    await next();
  } catch (err) {
    release();
    done(null);
    throw err;
  }
  // Bytes, not a stream: a stream can be read once, and every follower needs the whole answer.
  const answer = c.res.status === 200 ? { body: await c.res.clone().arrayBuffer(), headers: new Headers(c.res.headers) } : null;
  done(answer);
  // Followers keep sharing the answer until the cache holds it.
  const stored = (answer ? caches.default.put(key, responseOf(answer)) : Promise.resolve()).finally(release);
  try {
    c.executionCtx.waitUntil(stored);
  } catch {
    await stored; // no execution context (app.request in tests)
  }
});

/** An answer rendered after a miss, as bytes and headers; null when it is not one to share (not a 200). */
interface Rendered {
  body: ArrayBuffer;
  headers: Headers;
}

/** The answers being rendered after a miss, by URL (per isolate). */
const rendering = new Map<string, Promise<Rendered | null>>();

const responseOf = ({ body, headers }: Rendered) => new Response(body, { status: 200, headers: new Headers(headers) });

/** A stored (or shared) answer: 304 when If-None-Match names its ETag, else the answer itself (mutable headers). */
function answerFrom(stored: Response, ifNoneMatch: string | undefined): Response {
  const etag = stored.headers.get('ETag');
  if (etag && matchesIfNoneMatch(ifNoneMatch, etag)) {
    const headers = new Headers();
    for (const name of ['ETag', 'Cache-Control', 'Access-Control-Allow-Origin', 'Vary']) {
      const value = stored.headers.get(name);
      if (value) headers.set(name, value);
    }
    return new Response(null, { status: 304, headers });
  }
  return new Response(stored.body, stored);
}

/**
 * Public catalogue answers may be kept by browsers and shared caches as long as by the edge cache. Every answer says
 * `Vary: X-API-Key`: a test key's answer comes from the sandbox (and is never stored), so a shared cache must not
 * hand a sandbox answer to a live caller, nor the reverse.
 */
export const publicCaching = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const seconds = readConfig(c.env).stockCacheSeconds;
  if (c.res.status < 400) c.header('Cache-Control', seconds > 0 && c.var.mode !== 'test' ? `public, max-age=${seconds}` : 'no-store');
  c.header('Vary', 'X-API-Key', { append: true });
});

/** An operator changed these products (catalogue, price, stock, image): drop every cached public entry (here). */
export const purgeStock = (c: Context<AppEnv>, productIds: number[]) => purge(c, [...LISTS, ...productIds.flatMap(productPaths)]);

/** These products sold (or a sale was cancelled): drop their own entries only; the lists live out their seconds. */
export const purgeSoldProducts = (c: Context<AppEnv>, productIds: number[]) => purge(c, productIds.flatMap(productPaths));

async function purge(c: Context<AppEnv>, paths: string[]): Promise<void> {
  // The cache holds live answers only: a sale in the sandbox changes none of them.
  if (readConfig(c.env).stockCacheSeconds === 0 || c.var.mode === 'test') return;
  const origin = new URL(c.req.url).origin;
  await Promise.all(paths.map((path) => caches.default.delete(cacheKey(`${origin}${path}`))));
}
