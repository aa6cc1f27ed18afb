import { sql } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../db/batch';
import { orders, type OrderRow } from '../db/schema';
import { notFound } from '../lib/errors';
import { pageWindow, type Page } from '../lib/pagination';
import type { Query } from './caller';
import { isWholeEmail, type OperatorUser } from './operator-users';

// Orders as the operator sees them (GET /admin/orders, the console's orders pages): any user's.

export type OrderStatus = OrderRow['status'];

export interface OrderFilters {
  /** An exact order number (orders_order_number_unique) or a user's whole email (users_email_unique, then orders_user_created). */
  q?: string;
  userId?: number;
  status?: OrderStatus;
}

export const ordersQuery = ({ q, userId, status }: OrderFilters, page: Page): Query<{ rows: OrderRow[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  const conditions = [
    ...(q === undefined || q === ''
      ? []
      : [isWholeEmail(q) ? sql`user_id = (SELECT id FROM users WHERE email = ${q})` : sql`order_number = ${q.toUpperCase()}`]),
    ...(userId === undefined ? [] : [sql`user_id = ${userId}`]),
    ...(status === undefined ? [] : [sql`status = ${status}`]),
  ];
  const where = conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`;
  return {
    reads: [
      sql`SELECT ${columnsOf(orders)} FROM orders ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM orders ${where}`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<OrderRow>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
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
    sql`SELECT content FROM stock_items WHERE order_id = ${orderId} ORDER BY id`,
    sql`SELECT u.id, u.name, u.email FROM users u JOIN orders o ON o.user_id = u.id WHERE o.id = ${orderId}`,
  ],
  parse: ([orderRow, items, userRow]) => {
    const [order] = rowsOf<OrderRow>(orderRow);
    if (!order) throw notFound('Order');
    return { order, stockItems: rowsOf<{ content: string }>(items).map((i) => i.content), user: rowsOf<OperatorOrder['user']>(userRow)[0] };
  },
});
