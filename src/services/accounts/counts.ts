import { sql, type SQL } from 'drizzle-orm';

// A user's totals are kept, not counted (migrations/0030_counts_kept.sql: triggers update user_counts in the statement
// that inserts, changes or deletes an order, a ledger row or a deposit). A list's `meta.total` and the dashboard's
// statistics read this one row, so a page costs the same on the first day and after a million orders.

export type KeptCount = 'orders_count' | 'pending_orders' | 'spent_cents' | 'transactions_count' | 'deposits_count';

/** A user's kept count, as an SQL scalar (0 for a user with no history yet). */
export const keptCount = (userId: SQL | number, count: KeptCount) =>
  sql`coalesce((SELECT ${sql.identifier(count)} FROM user_counts WHERE user_id = ${userId}), 0)`;

/** The read a list pairs with its page: one row, `total`. */
export const keptTotal = (userId: SQL | number, count: KeptCount) => sql`SELECT ${keptCount(userId, count)} AS total`;
