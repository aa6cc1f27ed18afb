// The request lists the cases send, built from the loaded database before each case (bench/load.mjs sends them).
import { createHash } from 'node:crypto';
import { API, MAX_CASE_REQUESTS } from '../options.mjs';

export function requestBuilders({ db, keys, apiBase }) {
  const keyHash = (key) => createHash('sha256').update(key).digest('hex');
  // Purchases that can all succeed; `bare`: the same purchases as the ceiling worker's bare batch (key given by its hash).
  const purchaseRequests = async (quantity, { bare = false } = {}) => {
    const { results } = await db
      .prepare('SELECT id, stock_count FROM products WHERE active = 1 AND stock_count >= ?1 ORDER BY id')
      .bind(quantity)
      .all();
    // Round-robin over the products (lap after lap), so consecutive purchases hit different products, each user in
    // turn; every entry is bought once, so no request can run out of stock.
    const productIds = [];
    for (let lap = 0; productIds.length < MAX_CASE_REQUESTS; lap++) {
      const before = productIds.length;
      for (const p of results) {
        if (Math.floor(p.stock_count / quantity) > lap) productIds.push(p.id);
        if (productIds.length >= MAX_CASE_REQUESTS) break;
      }
      if (productIds.length === before) break;
    }
    return productIds.map((productId, i) => {
      const key = keys[i % keys.length];
      return bare
        ? { method: 'POST', path: '/purchase-batch', body: { key_hash: keyHash(key), product_id: productId, quantity } }
        : { method: 'POST', path: `${API}/orders`, headers: { 'X-API-Key': key }, body: { product_id: productId, quantity } };
    });
  };
  const cancelRequests = async () => {
    const { results } = await db
      .prepare(`SELECT id, user_id FROM orders WHERE status = 'pending' AND quantity = 1 ORDER BY id LIMIT ?1`)
      .bind(MAX_CASE_REQUESTS)
      .all();
    return results.map((o) => ({ method: 'POST', path: `${API}/orders/${o.id}/cancel`, headers: { 'X-API-Key': keys[o.user_id - 1] } }));
  };
  const byUser = (method, path) => keys.map((key) => ({ method, path, headers: { 'X-API-Key': key } }));
  // Dashboard sign-in of each bench user in turn (bench/data.mjs gives them all this password), a same-origin form.
  const signInRequests = () =>
    keys.map((_, i) => ({
      method: 'POST',
      path: '/dashboard/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: apiBase },
      body: new URLSearchParams({ email: `bench-user-${i + 1}@example.com`, password: 'bench-password' }).toString(),
    }));
  const stockMiss = [{ method: 'GET', path: `${API}/stock` }];
  // A ceiling's request list, built when the ceiling runs.
  const get = (path) => async () => [{ method: 'GET', path }];
  return { purchaseRequests, cancelRequests, byUser, signInRequests, stockMiss, get };
}
