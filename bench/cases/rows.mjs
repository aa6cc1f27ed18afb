// D1 rows per request on a small and a grown shop (issue #50): one buyer, one request per route, D1's own rows_read
// and rows_written from bench/instrumented-entry.ts's tally, first on a small history (one purchase through a key
// with a daily spend limit, made by a limited key), then after the same family bought 100 more times and the buyer
// has 20 deposits (while the rest of the shop is the bench's). Each request's rows must not grow with history: what
// a limited key's purchase and every list's total used to count is kept (migrations/0030_counts_kept.sql).
// `POST /orders` in the table is the purchase measured right after the history named (its own rows included).
import { API } from '../options.mjs';
import { log, session } from '../measure.mjs';

const GROWTH = 100;
// Pages of 5 (the dashboard's recent lists are 5 too), full on the small history already: the rows a page costs are
// the same in both, and what differs is what the history costs.
const PAGE = 5;
const ROUTES = [
  ['GET /orders', 'GET', `/orders?per_page=${PAGE}`],
  ['GET /wallet/transactions', 'GET', `/wallet/transactions?per_page=${PAGE}`],
  ['GET /wallet/deposits', 'GET', `/wallet/deposits?per_page=${PAGE}`],
  ['GET /api-keys', 'GET', '/api-keys'],
  ['GET /user/dashboard', 'GET', '/user/dashboard'],
  ['GET /wallet/balance', 'GET', '/wallet/balance'],
];

async function send(base, method, path, key, body) {
  const res = await fetch(`${base}${API}${path}`, {
    method,
    headers: { 'X-API-Key': key, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json().catch(() => null);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

/** One request, alone: the rows its round trips read and wrote before the response. */
async function rowsOf(base, [, method, path], key, body) {
  await fetch(`${base}/__bench/round-trips`);
  await send(base, method, path, key, body);
  const tally = await (await fetch(`${base}/__bench/round-trips`)).json();
  return { read: tally.rows_read, written: tally.rows_written };
}

export async function rowsByHistoryCase(b) {
  if (!b.selected('rows_by_history')) return;
  const base = b.apiBase;
  // The last bench user, whom the throughput cases have used like every other one.
  const key = b.keys[b.keys.length - 1];
  const { results: [product] } = await b.db.prepare('SELECT id FROM products WHERE active = 1 AND stock_count >= ?1 ORDER BY stock_count DESC LIMIT 1').bind(GROWTH + 2).all();
  const parent = (await send(base, 'POST', '/api-keys', key, { name: 'bench limited', spend_limit_per_day: 1_000_000 })).data.key;
  const child = (await send(base, 'POST', '/api-keys', parent, { name: 'bench limited child', spend_limit_per_day: 500_000 })).data.key;
  const purchase = ['POST /orders qty 1, limited key family', 'POST', '/orders'];
  const buy = () => rowsOf(base, purchase, child, { product_id: product.id, quantity: 1 });
  const measureAll = async () => {
    const rows = { [purchase[0]]: await buy() };
    for (const route of ROUTES) rows[route[0]] = await rowsOf(base, route, key);
    return rows;
  };
  // The production configuration has no payment gateway: deposits are written as the API would (pending).
  const deposits = (count) =>
    b.db
      .prepare(`INSERT INTO deposits (user_id, amount_cents, gateway, status, expires_at, created_at, updated_at)
                SELECT ?1, 1000, 'gateway_one', 'pending', ?2, ?2, ?2 FROM json_each(?3)`)
      .bind(b.keys.length, new Date().toISOString(), JSON.stringify(Array.from({ length: count }, (_, i) => i)))
      .run();
  for (let i = 0; i < PAGE; i++) await buy();
  await deposits(PAGE);
  const small = await measureAll();
  for (let i = 0; i < GROWTH; i++) await buy();
  await deposits(20);
  const grown = await measureAll();
  const rows = Object.keys(small).map((route) => ({ route, small: small[route], grown: grown[route] }));
  session.rowsByHistory = { growth: `${GROWTH} purchases through the family, 20 deposits`, rows };
  log(`\nD1 rows per request, small history -> after ${GROWTH} more purchases through the key family and 20 deposits:`);
  for (const r of rows) log(`  ${r.route.padEnd(40)} read ${String(r.small.read).padStart(4)} -> ${String(r.grown.read).padStart(4)}, written ${r.small.written} -> ${r.grown.written}`);
}
