// A ledger history on top of the bench data (bench/data.mjs: users, products, stock), for measuring what the ledger
// audit costs on a large database: orders of one item each (a tenth cancelled, refunded, items revoked), their
// purchase and refund rows, deposits (half paid, credited once). Written with set-based SQL, so every invariant of
// src/services/operator/ledger-audit.ts holds: balance_after chains by id, balances equal their ledger, stock_count the available items.

const CHUNK = 2_000;
const START = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms) => new Date(ms).toISOString();

function chunks(array, size) {
  const out = [];
  for (let i = 0; i < array.length; i += size) out.push(array.slice(i, i + size));
  return out;
}

/** Rows appended to a user's ledger continue from the balance_after of that user's last row (0 without one). */
const openings = `SELECT user_id, balance_after_cents AS opening FROM wallet_transactions WHERE id IN (SELECT max(id) FROM wallet_transactions GROUP BY user_id)`;

export async function loadLedger(db, { orders, deposits, users }, productOf, progress) {
  const rows = Array.from({ length: orders }, (_, i) => [`AUD-${i}`, (i % users) + 1, productOf(i), i % 10 === 0 ? 'cancelled' : i % 3 === 0 ? 'completed' : 'pending', iso(START + i * 1000)]);
  let done = 0;
  for (const chunk of chunks(rows, CHUNK)) {
    await db
      .prepare(
        `INSERT INTO orders (order_number, user_id, product_id, product_name, quantity, unit_price_cents, total_amount_cents, list_unit_price_cents, status, created_at, updated_at)
         SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), p.id, p.name, 1, p.price_cents, p.price_cents, p.price_cents,
                json_extract(j.value, '$[3]'), json_extract(j.value, '$[4]'), json_extract(j.value, '$[4]')
         FROM json_each(?1) AS j JOIN products p ON p.id = json_extract(j.value, '$[2]')`,
      )
      .bind(JSON.stringify(chunk))
      .run();
    progress((done += chunk.length), orders + deposits);
  }
  // Each order gets the next available item of its product; a few hundred products per statement keep each one short.
  const { n: products } = await db.prepare('SELECT coalesce(max(id), 0) AS n FROM products').first();
  for (let from = 1; from <= products; from += 500) {
    await db
      .prepare(
        `UPDATE stock_items SET status = CASE WHEN m.status = 'cancelled' THEN 'revoked' ELSE 'sold' END, order_id = m.order_id
         FROM (SELECT s.id AS item_id, o.id AS order_id, o.status
               FROM (SELECT id, product_id, status, row_number() OVER (PARTITION BY product_id ORDER BY id) AS n
                     FROM orders WHERE product_id BETWEEN ?1 AND ?2) o
               JOIN (SELECT id, product_id, row_number() OVER (PARTITION BY product_id ORDER BY id) AS n
                     FROM stock_items WHERE status = 'available' AND product_id BETWEEN ?1 AND ?2) s
                 ON s.product_id = o.product_id AND s.n = o.n) AS m
         WHERE stock_items.id = m.item_id`,
      )
      .bind(from, from + 499)
      .run();
  }
  const append = (source, type, description) =>
    db
      .prepare(
        `INSERT INTO wallet_transactions (user_id, type, amount_cents, balance_after_cents, description, order_id, deposit_id, operation_id, created_at)
         SELECT x.user_id, '${type}', x.amount, x.opening + sum(x.amount) OVER (PARTITION BY x.user_id ORDER BY x.seq), ${description},
                x.order_id, x.deposit_id, '${type}-' || x.seq, x.at
         FROM (SELECT x.*, coalesce(b.opening, 0) AS opening FROM (${source}) AS x LEFT JOIN (${openings}) AS b ON b.user_id = x.user_id) AS x
         ORDER BY x.seq`,
      )
      .run();
  await append(`SELECT user_id, -total_amount_cents AS amount, id AS order_id, NULL AS deposit_id, id AS seq, created_at AS at FROM orders`, 'purchase', `'Purchase ' || x.seq`);
  await append(
    `SELECT user_id, total_amount_cents AS amount, id AS order_id, NULL AS deposit_id, id AS seq, updated_at AS at FROM orders WHERE status = 'cancelled'`,
    'refund',
    `'Refund ' || x.seq`,
  );

  const depositRows = Array.from({ length: deposits }, (_, i) => [(i % users) + 1, 100 + (i % 5000), ['paid', 'pending', 'expired', 'failed'][i % 4], iso(START + i * 1000)]);
  for (const chunk of chunks(depositRows, CHUNK)) {
    await db
      .prepare(
        `INSERT INTO deposits (user_id, amount_cents, gateway, status, expires_at, paid_at, created_at, updated_at, reference)
         SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), 'gateway_one', json_extract(value, '$[2]'), json_extract(value, '$[3]'),
                CASE WHEN json_extract(value, '$[2]') = 'paid' THEN json_extract(value, '$[3]') END, json_extract(value, '$[3]'),
                json_extract(value, '$[3]'), 'aud-' || key || '-' || ?2
         FROM json_each(?1)`,
      )
      .bind(JSON.stringify(chunk), done)
      .run();
    progress((done += chunk.length), orders + deposits);
  }
  await append(`SELECT user_id, amount_cents AS amount, NULL AS order_id, id AS deposit_id, id AS seq, paid_at AS at FROM deposits WHERE status = 'paid'`, 'deposit', `'Deposit #' || x.seq`);
  await db
    .prepare(`UPDATE users SET balance_cents = (SELECT balance_after_cents FROM wallet_transactions t WHERE t.user_id = users.id ORDER BY t.id DESC LIMIT 1)`)
    .run();
  await db
    .prepare(`UPDATE products SET stock_count = (SELECT count(*) FROM stock_items s WHERE s.product_id = products.id AND s.status = 'available')`)
    .run();
}
