// Reference rows (no target): the primitives the routes are made of, each alone, on the same runtime.
import { measure } from '../measure.mjs';
import { API } from '../options.mjs';

/** Runs the reference rows; answers the size of GET /stock's body (the cached /stock's ceiling is as big). */
export async function referenceCases(b) {
  await b.reference('app_root', () => measure('ref: GET /api/v2 (app, no D1)', b.apiBase, [{ method: 'GET', path: API }]));
  await b.reference('ratelimit', () => measure('ref: one rate-limiter call', b.ceilingBase, [{ method: 'GET', path: '/ratelimit' }]));
  await b.reference('cache_hit', () => measure('ref: one Cache API hit', b.ceilingBase, [{ method: 'GET', path: '/cache-hit' }]));
  await b.reference('pbkdf2', () => measure('ref: one PBKDF2 (100,000 iterations)', b.ceilingBase, [{ method: 'GET', path: '/pbkdf2' }]));
  const stockBytes = (await (await fetch(`${b.apiBase}${API}/stock`)).arrayBuffer()).byteLength;
  await b.reference('empty_stock_size', () => measure(`ref: empty worker, ${(stockBytes / 1024).toFixed(0)} KB body`, b.ceilingBase, [{ method: 'GET', path: `/empty?bytes=${stockBytes}` }]));
  return stockBytes;
}
