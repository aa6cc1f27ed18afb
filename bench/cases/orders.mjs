// Purchases (qty 1, with a coupon, packs of 100), each against its own bare batch; cancels; the order list.
import { loadPacks } from '../data.mjs';
import { measure, progress } from '../measure.mjs';
import { API, DURATION, MAX_CASE_REQUESTS, PROFILE, WARMUP } from '../options.mjs';

// Packs of 100 a run can buy at most on this machine (the route and its bare batch at about 120 to 300 req/s, quick
// runs on small data included): the bestsellers get enough for the case and its two bare batches first. A bound too
// low starves the second bare batch (seen in a quick run: 123 req/s against a bound of 60).
const PACK_RATE_BOUND = 300;

/** Runs the order cases; answers the purchase of 1 (the first round of the final level's scaling point). */
export async function orderCases(b) {
  const { purchaseRequests, cancelRequests, byUser } = b.requests;
  const q1 = await b.bracketed(['purchase_batch', () => purchaseRequests(1, { bare: true }), { consume: true }], 'orders_q1', async () =>
    measure('POST /orders qty 1', b.apiBase, await purchaseRequests(1), { consume: true }),
  );
  // The same purchases with a 10 % coupon (no limits: a campaign code): priced in the same one batch.
  await b.runCase('orders_q1_coupon', async () => {
    await b.db
      .prepare(`INSERT OR IGNORE INTO coupons (code, percent_off, max_per_user, active, created_at, updated_at)
                VALUES ('BENCH-10', 10, NULL, 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`)
      .run();
    const requests = (await purchaseRequests(1)).map((r) => ({ ...r, body: { ...r.body, coupon: 'bench-10' } }));
    const withCoupon = await measure('POST /orders qty 1 with a coupon', b.apiBase, requests, { consume: true });
    // The same purchases without it again, right after: a later run is slower (the database grows, the stock of the
    // bestsellers falls: 0.92x with no coupon at all), so the coupon is compared with the mean of before and after.
    const after = await measure('POST /orders qty 1 (again, after the coupon case)', b.apiBase, await purchaseRequests(1), { consume: true });
    return { ...withCoupon, without_coupon_after_rps: after.rps };
  });
  if (b.selected('orders_q100') || b.selected('purchase_batch_q100')) {
    const packsPerRun = Math.min(MAX_CASE_REQUESTS, PACK_RATE_BOUND * (WARMUP + DURATION));
    await b.load(() => loadPacks(b.db, PROFILE.products, 3 * packsPerRun, 100, progress('packs   ')));
  }
  // A pack of 100 against the same purchase batch of 100 items, bare (not a one-row write: claiming 100 items is work
  // the route cannot skip).
  await b.bracketed(['purchase_batch_q100', () => purchaseRequests(100, { bare: true }), { consume: true }], 'orders_q100', async () =>
    measure('POST /orders qty 100', b.apiBase, await purchaseRequests(100), { consume: true }),
  );
  await b.runCase('cancel', async () => measure('POST /orders/{id}/cancel', b.apiBase, await cancelRequests(), { consume: true }));
  await b.runCase('orders_list', () => measure('GET /orders', b.apiBase, byUser('GET', `${API}/orders`)));
  return q1;
}
