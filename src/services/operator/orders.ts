import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import { orders, type OrderRow } from '../../db/schema';
import { withinDays } from '../../db/date-range';
import type { DateRange } from '../../lib/date-range';
import { notFound } from '../../lib/errors';
import { pageWindow, type Page } from '../../lib/pagination';
import type { Query } from '../caller';
import { buyerColumns, type Buyer, type OperatorUser } from './users';

// Orders as the operator sees them (GET /admin/orders, the console's orders pages): any user's.

export type OrderStatus = OrderRow['status'];

export interface OrderFilters extends DateRange {
  /** The start of an order number, or a part of the buyer's email or of the product's name (case-insensitive). */
  q?: string;
  userId?: number;
  status?: OrderStatus;
}

export type BuyerOrder = OrderRow & Buyer;

/**
 * The search: an order-number prefix (a range on orders_order_number_unique), or a substring of the buyer's email or
 * the product's name (a scan bounded by the page). instr(), not LIKE: D1 refuses LIKE patterns over 50 bytes, and
 * instr() has no wildcards to escape. lower() folds ASCII only, as in the users search.
 */
const orderSearch = (q: string) => {
  const number = q.toUpperCase();
  return sql`(order_number >= ${number} AND order_number < ${`${number}\u{10FFFF}`}
              OR instr(lower(product_name), lower(${q})) > 0
              OR user_id IN (SELECT id FROM users WHERE instr(lower(email), lower(${q})) > 0))`;
};

/** The conditions of an orders list or export, as one WHERE clause. */
export function ordersWhere({ q, userId, status, from, to }: OrderFilters): SQL {
  const conditions = [
    ...(q === undefined || q === '' ? [] : [orderSearch(q)]),
    ...(userId === undefined ? [] : [sql`user_id = ${userId}`]),
    ...(status === undefined ? [] : [sql`status = ${status}`]),
    ...withinDays(sql`created_at`, { from, to }),
  ];
  return conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`;
}

/**
 * A page of the filtered orders, how many match in all, and their revenue: the totals of those not cancelled (a
 * cancelled order was refunded), in cents.
 */
export const ordersQuery = (filters: OrderFilters, page: Page): Query<{ rows: BuyerOrder[]; total: number; revenueCents: number }> => {
  const { limit, offset } = pageWindow(page);
  const where = ordersWhere(filters);
  return {
    reads: [
      sql`SELECT ${columnsOf(orders)}, ${buyerColumns(sql`orders.user_id`)} FROM orders ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total, coalesce(sum(CASE WHEN status <> 'cancelled' THEN total_amount_cents END), 0) AS revenueCents FROM orders ${where}`,
    ],
    parse: ([rows, totals]) => {
      const { total, revenueCents } = rowsOf<{ total: number; revenueCents: number }>(totals)[0];
      return { rows: rowsOf<BuyerOrder>(rows), total, revenueCents };
    },
  };
};

export interface OperatorOrder {
  order: OrderRow;
  stockItems: string[];
  user: Pick<OperatorUser, 'id' | 'name' | 'email'>;
}

/** One order with its delivered items and its user. */
export const orderDetailQuery = (orderId: number): Query<OperatorOrder> => ({
  reads: [
    sql`SELECT ${columnsOf(orders)} FROM orders WHERE id = ${orderId}`,
    // As the buyer sees them: a replaced item gives its place to its replacement.
    sql`SELECT content FROM stock_items WHERE order_id = ${orderId} AND replaced_by IS NULL ORDER BY coalesce(slot, id)`,
    sql`SELECT u.id, u.name, u.email FROM users u JOIN orders o ON o.user_id = u.id WHERE o.id = ${orderId}`,
  ],
  parse: ([orderRow, items, userRow]) => {
    const [order] = rowsOf<OrderRow>(orderRow);
    if (!order) throw notFound('Order');
    return { order, stockItems: rowsOf<{ content: string }>(items).map((i) => i.content), user: rowsOf<OperatorOrder['user']>(userRow)[0] };
  },
});
