// The public stock reads: the cached list, and the list, one product and a check of 50 ids with the cache off.
import { measure } from '../measure.mjs';
import { API, PROFILE } from '../options.mjs';

/** Runs the stock cases; answers the final level's /stock miss (the first round of its scaling point). */
export async function stockCases(b, stockBytes) {
  const { get, stockMiss } = b.requests;
  await b.bracketed(['cache_hit_stock_size', get(`/cache-hit?bytes=${stockBytes}`)], 'stock_hit', () =>
    measure('GET /stock (cache hit)', b.apiBase, [{ method: 'GET', path: `${API}/stock` }]),
  );
  // Misses go to the same API with the Cache API off: each request reads D1, as a miss does.
  const stockMissFinal = await b.runCase('stock_miss', () => measure('GET /stock (cache miss)', b.noCacheBase, stockMiss));
  const products = PROFILE.products;
  await b.runCase('stock_id', () => measure('GET /stock/{id} (cache miss)', b.noCacheBase, [{ method: 'GET', path: `${API}/stock/{ids:1:${products}}` }]));
  await b.runCase('stock_check', () => measure('GET /stock/check 50 ids (miss)', b.noCacheBase, [{ method: 'GET', path: `${API}/stock/check?ids={ids:50:${products}}` }]));
  return stockMissFinal;
}
