// The drop: the flash sale (one product sold out by many buyers at once), then the same drop while storefronts poll
// GET /stock, compared with the flash sale of the same run.
import { loadDrop } from '../data.mjs';
import { log, measure, runLoad, stockListReadCount } from '../measure.mjs';
import { API, DROP_MAX_SECONDS, PROFILE, STOCK_CACHE_SECONDS } from '../options.mjs';

/**
 * The flash sale: `buyers` connections buy quantity 1 of one new product of `items` items (the users in turn) until it
 * is sold out: `items + buyers` requests in all, so every connection meets the sold-out answer and every answer, the
 * last purchases' too, is counted. Then the database says what was sold.
 */
export async function dropSale(db, base, keys) {
  const { items, buyers } = PROFILE.drop;
  const productId = await loadDrop(db, items);
  const requests = keys.map((key) => ({ method: 'POST', path: `${API}/orders`, headers: { 'X-API-Key': key }, body: { product_id: productId, quantity: 1 } }));
  const name = `flash sale: ${items.toLocaleString('en-US')} items, ${buyers} buyers`;
  const result = await measure(name, base, requests, { soldOutStatus: 400, maxRequests: items + buyers, connections: buyers, warmup: 0, duration: DROP_MAX_SECONDS });
  const state = await dropState(db, productId);
  return { ...result, drop: dropOutcome(result, state, { productId, items, buyers }) };
}

/** The drop's product as the database has it after the sale. */
function dropState(db, productId) {
  return db
    .prepare(
      `SELECT (SELECT count(*) FROM stock_items WHERE product_id = ?1 AND status = 'sold') AS items_sold,
              (SELECT count(*) FROM stock_items WHERE product_id = ?1 AND status = 'available') AS items_available,
              (SELECT stock_count FROM products WHERE id = ?1) AS stock_count,
              (SELECT count(*) FROM orders WHERE product_id = ?1) AS orders,
              (SELECT coalesce(sum(quantity), 0) FROM orders WHERE product_id = ?1) AS quantity_ordered`,
    )
    .bind(productId)
    .first();
}

/** What a drop sold, from its answers and the database: bought, oversold, 5xx (logged). */
function dropOutcome(result, state, { productId, items, buyers }) {
  const bought = result.statuses['201'] ?? 0;
  const serverErrors = Object.entries(result.statuses).reduce((n, [status, count]) => n + (Number(status) >= 500 ? count : 0), 0);
  const oversold = Math.max(0, bought - items, state.quantity_ordered - items, state.items_sold - items);
  log(`    ${result.requests} requests in ${result.duration_s} s: ${bought} bought, ${state.items_sold} items sold, ${state.quantity_ordered} ordered in ${state.orders} orders, stock_count ${state.stock_count}, ${result.sold_out_responses} sold-out answers, ${oversold} oversold, ${serverErrors} 5xx`);
  return { product_id: productId, items, buyers, bought, ...state, sold_out_responses: result.sold_out_responses, oversold, server_errors: serverErrors };
}

const STOREFRONT_POLLERS = 50;

/**
 * The drop with storefronts: the flash sale again (a new product of the same size), while STOREFRONT_POLLERS more
 * connections poll GET /stock as storefronts do during a drop. A sale purges only the sold product's entries, so the
 * list should stay a cache hit: D1 reads of /stock at most one per STOCK_CACHE_SECONDS (this location), and the
 * purchases about as fast as the flash sale of the same run without pollers (`plain`).
 */
export async function dropWithStorefronts(db, base, keys, plain) {
  const { items, buyers } = PROFILE.drop;
  const productId = await loadDrop(db, items);
  const requests = keys.map((key) => ({ method: 'POST', path: `${API}/orders`, headers: { 'X-API-Key': key }, body: { product_id: productId, quantity: 1 } }));
  // The pollers outlast the drop (it sold out in `plain.duration_s` without them); only the drop's seconds count.
  const pollers = runLoad('storefront pollers', base, [{ method: 'GET', path: `${API}/stock` }], {
    connections: STOREFRONT_POLLERS,
    warmup: 0,
    duration: Math.ceil(plain.duration_s * 2) + 2,
  });
  const readsBefore = stockListReadCount();
  const name = `drop with storefronts: ${items.toLocaleString('en-US')} items, ${buyers} buyers, ${STOREFRONT_POLLERS} polling /stock`;
  const sale = await measure(name, base, requests, { soldOutStatus: 400, maxRequests: items + buyers, connections: buyers, warmup: 0, duration: DROP_MAX_SECONDS });
  const stockReads = stockListReadCount() - readsBefore;
  const polled = await pollers;
  const drop = dropOutcome(sale, await dropState(db, productId), { productId, items, buyers });
  const storefronts = {
    pollers: STOREFRONT_POLLERS,
    polls: polled.requests,
    poll_rps: polled.rps,
    poll_errors: polled.errors,
    poll_server_errors: Object.entries(polled.statuses).reduce((n, [status, count]) => n + (Number(status) >= 500 ? count : 0), 0),
    stock_reads: stockReads,
    stock_reads_per_s: stockReads / sale.duration_s,
    stock_cache_seconds: STOCK_CACHE_SECONDS,
    baseline_rps: plain.rps,
    throughput_ratio: sale.rps / plain.rps,
  };
  log(`    /stock: ${polled.requests} polls (${Math.round(polled.rps)} req/s), ${stockReads} read from D1 in ${sale.duration_s} s (${storefronts.stock_reads_per_s.toFixed(2)}/s); purchases ${Math.round(sale.rps)} req/s vs ${Math.round(plain.rps)} in the flash sale of this run (${storefronts.throughput_ratio.toFixed(2)}×)`);
  return { ...sale, storefront_drop: { ...drop, ...storefronts } };
}

/**
 * Last of a run: the drop adds a product and thousands of orders that the cases above should not see. The drop with
 * storefronts needs the flash sale of the same run as its baseline, so selecting it alone runs (and reports) both.
 */
export async function dropCases(b) {
  const withStorefronts = b.selected('drop_storefronts');
  const flashSale = b.selected('flash_sale') || withStorefronts ? await b.runCase('flash_sale', () => dropSale(b.db, b.apiBase, b.keys), { always: true }) : null;
  if (withStorefronts) await b.runCase('drop_storefronts', () => dropWithStorefronts(b.db, b.apiBase, b.keys, flashSale));
}
