// Ledger audit: the money invariants as SQL, each query returning the rows that break one. Used by the tests after
// every randomized run and by `npm run audit:ledger` against a real database (local, or production with read-only
// queries through `wrangler d1 execute --remote`). Self-contained (no runtime imports) so Node can load it directly.

/** The ids a check is partitioned by: a column of its result rows, naming rows of `table`. */
export interface AuditKey {
  column: string;
  table: 'users' | 'products' | 'orders' | 'stock_items' | 'deposits' | 'wallet_transactions' | 'api_keys';
}

export interface AuditCheck {
  name: string;
  /** Rows returned are violations. */
  sql: string;
  /** What bounds the check to a window of ids (`windowedSql`); a check without one always runs whole. */
  key?: AuditKey;
}

export const AUDIT_CHECKS: AuditCheck[] = [
  {
    name: 'balance equals the sum of the ledger',
    key: { column: 'user_id', table: 'users' },
    sql: `SELECT u.id AS user_id, u.balance_cents, coalesce(sum(t.amount_cents), 0) AS ledger_cents
          FROM users u LEFT JOIN wallet_transactions t ON t.user_id = u.id
          GROUP BY u.id HAVING u.balance_cents <> coalesce(sum(t.amount_cents), 0)`,
  },
  {
    name: 'balance is never negative',
    key: { column: 'user_id', table: 'users' },
    sql: `SELECT id AS user_id, balance_cents FROM users WHERE balance_cents < 0`,
  },
  {
    name: 'balance_after chains by ascending id',
    key: { column: 'user_id', table: 'users' },
    sql: `SELECT id, user_id, balance_after_cents, previous_cents, amount_cents FROM (
            SELECT id, user_id, balance_after_cents, amount_cents,
                   coalesce(lag(balance_after_cents) OVER (PARTITION BY user_id ORDER BY id), 0) AS previous_cents
            FROM wallet_transactions)
          WHERE balance_after_cents <> previous_cents + amount_cents OR balance_after_cents < 0`,
  },
  {
    name: 'stock_count equals the available items',
    key: { column: 'product_id', table: 'products' },
    sql: `SELECT p.id AS product_id, p.stock_count,
                 (SELECT count(*) FROM stock_items s WHERE s.product_id = p.id AND s.status = 'available') AS available
          FROM products p
          WHERE p.stock_count <> (SELECT count(*) FROM stock_items s WHERE s.product_id = p.id AND s.status = 'available')`,
  },
  {
    // Replaced items (a warranty claim's) stay tied to their order, revoked, beside the item that took their place.
    name: 'every order holds exactly its quantity of items, of its product',
    key: { column: 'order_id', table: 'orders' },
    sql: `SELECT o.id AS order_id, o.quantity, count(s.id) AS items, sum(s.product_id <> o.product_id) AS foreign_items
          FROM orders o LEFT JOIN stock_items s ON s.order_id = o.id AND s.replaced_by IS NULL
          GROUP BY o.id HAVING count(s.id) <> o.quantity OR sum(s.product_id <> o.product_id) > 0`,
  },
  {
    name: 'items of cancelled orders are revoked, of other orders sold',
    key: { column: 'item_id', table: 'stock_items' },
    sql: `SELECT s.id AS item_id, s.status, o.status AS order_status FROM stock_items s JOIN orders o ON o.id = s.order_id
          WHERE (s.replaced_by IS NULL AND (o.status = 'cancelled') <> (s.status = 'revoked'))
             OR (s.replaced_by IS NOT NULL AND s.status <> 'revoked') OR s.status = 'available'`,
  },
  {
    name: 'revoked items, and only they, carry revoked_at',
    sql: `SELECT id AS item_id, status, revoked_at FROM stock_items WHERE (status = 'revoked') <> (revoked_at IS NOT NULL)`,
  },
  {
    name: 'no final-sale order is cancelled',
    sql: `SELECT id AS order_id FROM orders WHERE status = 'cancelled' AND cancellable = 0`,
  },
  {
    name: 'order total equals list price times quantity less its discount, and never exceeds unit price times quantity',
    key: { column: 'order_id', table: 'orders' },
    sql: `SELECT id AS order_id FROM orders
          WHERE total_amount_cents <> list_unit_price_cents * quantity - discount_amount_cents OR total_amount_cents > unit_price_cents * quantity`,
  },
  {
    name: 'every order is paid for exactly once, by its total',
    key: { column: 'order_id', table: 'orders' },
    sql: `SELECT o.id AS order_id, count(t.id) AS purchases, sum(t.amount_cents) AS paid_cents
          FROM orders o LEFT JOIN wallet_transactions t ON t.order_id = o.id AND t.type = 'purchase'
          GROUP BY o.id HAVING count(t.id) <> 1 OR sum(t.amount_cents) <> -o.total_amount_cents`,
  },
  {
    // Operator and claim refunds are further refund rows of the order; a cancellation refunds the rest.
    name: 'no order is refunded beyond its total; its refunds add up to its refunded_amount; a cancelled order is refunded in full',
    key: { column: 'order_id', table: 'orders' },
    sql: `SELECT o.id AS order_id, o.status, o.total_amount_cents, o.refunded_amount_cents, count(t.id) AS refunds,
                 coalesce(sum(t.amount_cents), 0) AS refunded_cents
          FROM orders o LEFT JOIN wallet_transactions t ON t.order_id = o.id AND t.type = 'refund'
          GROUP BY o.id
          HAVING coalesce(sum(t.amount_cents), 0) > o.total_amount_cents
              OR coalesce(sum(t.amount_cents), 0) <> o.refunded_amount_cents
              OR (o.status = 'cancelled' AND coalesce(sum(t.amount_cents), 0) <> o.total_amount_cents)`,
  },
  {
    name: "a replacement is in its claim's order, in the reported item's place; the reported item is revoked",
    sql: `SELECT c.id AS claim_id FROM claims c
          LEFT JOIN stock_items n ON n.id = c.replacement_item_id LEFT JOIN stock_items r ON r.id = c.stock_item_id
          WHERE c.status = 'replaced'
            AND (n.order_id IS NOT c.order_id OR r.replaced_by IS NOT c.replacement_item_id OR r.status <> 'revoked'
                 OR n.slot IS NOT coalesce(r.slot, r.id))`,
  },
  {
    name: 'a deposit is credited at most once, only when paid, by its amount',
    key: { column: 'deposit_id', table: 'deposits' },
    sql: `SELECT d.id AS deposit_id, d.status, count(t.id) AS credits, sum(t.amount_cents) AS credited_cents
          FROM deposits d LEFT JOIN wallet_transactions t ON t.deposit_id = d.id AND t.type = 'deposit'
          GROUP BY d.id
          HAVING (d.status = 'paid' AND (count(t.id) <> 1 OR sum(t.amount_cents) <> d.amount_cents))
              OR (d.status <> 'paid' AND count(t.id) <> 0)`,
  },
  {
    name: 'ledger rows belong to the user of their order or deposit',
    key: { column: 'transaction_id', table: 'wallet_transactions' },
    sql: `SELECT t.id AS transaction_id FROM wallet_transactions t
          LEFT JOIN orders o ON o.id = t.order_id LEFT JOIN deposits d ON d.id = t.deposit_id
          WHERE (t.order_id IS NOT NULL AND o.user_id <> t.user_id) OR (t.deposit_id IS NOT NULL AND d.user_id <> t.user_id)`,
  },
  {
    // Kept by the triggers of migrations/0030_counts_kept.sql; the lists' totals and the dashboard read them.
    name: 'kept user counts equal the counted ones',
    key: { column: 'user_id', table: 'users' },
    sql: `SELECT * FROM (
            SELECT u.id AS user_id,
                   coalesce(c.orders_count, 0) AS kept_orders, (SELECT count(*) FROM orders o WHERE o.user_id = u.id) AS orders,
                   coalesce(c.pending_orders, 0) AS kept_pending,
                   (SELECT count(*) FROM orders o WHERE o.user_id = u.id AND o.status = 'pending') AS pending,
                   coalesce(c.spent_cents, 0) AS kept_spent_cents,
                   (SELECT coalesce(sum(o.total_amount_cents), 0) FROM orders o WHERE o.user_id = u.id AND o.status <> 'cancelled') AS spent_cents,
                   coalesce(c.transactions_count, 0) AS kept_transactions,
                   (SELECT count(*) FROM wallet_transactions t WHERE t.user_id = u.id) AS transactions,
                   coalesce(c.deposits_count, 0) AS kept_deposits, (SELECT count(*) FROM deposits d WHERE d.user_id = u.id) AS deposits
            FROM users u LEFT JOIN user_counts c ON c.user_id = u.id)
          WHERE kept_orders <> orders OR kept_pending <> pending OR kept_spent_cents <> spent_cents
             OR kept_transactions <> transactions OR kept_deposits <> deposits`,
  },
  {
    // A key's row of a day holds the orders of that day of the key and of every key made from it (descendants: one
    // range of api_keys_ancestry); the spend limit reads it.
    name: 'kept key spending per day equals the family orders of that day',
    key: { column: 'api_key_id', table: 'api_keys' },
    sql: `WITH family AS (
            SELECT k.id AS api_key_id, k.id AS member FROM api_keys k
            UNION ALL
            SELECT k.id, d.id FROM api_keys k JOIN api_keys d ON d.ancestry >= k.ancestry || k.id || '/' AND d.ancestry < k.ancestry || k.id || '0'),
          counted AS (
            SELECT f.api_key_id, substr(o.created_at, 1, 10) AS day, sum(o.total_amount_cents) AS cents
            FROM family f JOIN orders o ON o.api_key_id = f.member GROUP BY f.api_key_id, substr(o.created_at, 1, 10))
          SELECT s.api_key_id, s.day, s.spent_cents AS kept_cents, coalesce(c.cents, 0) AS counted_cents
          FROM api_key_spend_days s LEFT JOIN counted c ON c.api_key_id = s.api_key_id AND c.day = s.day
          WHERE s.spent_cents <> coalesce(c.cents, 0)
          UNION ALL
          SELECT c.api_key_id, c.day, 0, c.cents FROM counted c
          WHERE NOT EXISTS (SELECT 1 FROM api_key_spend_days s WHERE s.api_key_id = c.api_key_id AND s.day = c.day)`,
  },
  {
    name: 'no user has more than 5 active API keys',
    key: { column: 'user_id', table: 'users' },
    sql: `SELECT user_id, count(*) AS active_keys FROM api_keys WHERE revoked_at IS NULL GROUP BY user_id HAVING count(*) > 5`,
  },
];

/**
 * A check restricted to the rows whose key is in [from, to]. SQLite pushes the range into the query (into its GROUP
 * BY, window PARTITION BY or join), so a window reads only its own share of the tables: the bounded form of a check
 * that would run past D1's 30 s limit on a large database.
 */
export function windowedSql(check: AuditCheck, from: number, to: number): string {
  if (!check.key) return check.sql;
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) throw new Error('A window is a range of integer ids.');
  return `SELECT * FROM (${check.sql}) WHERE ${check.key.column} BETWEEN ${from} AND ${to}`;
}

export interface AuditViolation {
  check: string;
  rows: Record<string, unknown>[];
}

interface QueryableDatabase {
  prepare(query: string): { all<T = Record<string, unknown>>(): Promise<{ results: T[] }> };
}

/** Runs every check; an empty result means the ledger is consistent. */
export async function auditLedger(db: QueryableDatabase): Promise<AuditViolation[]> {
  const violations: AuditViolation[] = [];
  for (const check of AUDIT_CHECKS) {
    const { results } = await db.prepare(check.sql).all();
    if (results.length > 0) violations.push({ check: check.name, rows: results });
  }
  return violations;
}
