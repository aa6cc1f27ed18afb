import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { pageWindow, type Page } from '../../lib/pagination';
import { queryPlain, type Query } from '../caller';

export interface RevokedItem {
  orderId: number;
  orderNumber: string;
  userId: number;
  productId: number;
  sku: string;
  item: string;
  revokedAt: string;
  reason: 'cancelled' | 'replaced';
}

/**
 * The operator's feed of revoked items (items of cancelled orders: disclosed, refunded, to be deactivated at the
 * vendor), newest revocation first; `since` (inclusive, ISO 8601 UTC) lets a poller ask only for what is new. A query,
 * so the console reads it in its page's batch.
 */
export const revokedItemsQuery = (since: string | undefined, page: Page): Query<{ rows: RevokedItem[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  // `revoked_at IS NOT NULL` is the partial index's own condition (stock_items_revoked), so the index serves both reads.
  const revoked = sql`s.revoked_at IS NOT NULL${since === undefined ? sql`` : sql` AND s.revoked_at >= ${since}`}`;
  return {
    reads: [
      sql`SELECT o.id AS orderId, o.order_number AS orderNumber, o.user_id AS userId, s.product_id AS productId, p.sku,
                 s.content AS item, s.revoked_at AS revokedAt,
                 CASE WHEN s.replaced_by IS NULL THEN 'cancelled' ELSE 'replaced' END AS reason
          FROM stock_items s JOIN orders o ON o.id = s.order_id JOIN products p ON p.id = s.product_id
          WHERE ${revoked} ORDER BY s.revoked_at DESC, s.id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM stock_items s WHERE ${revoked}`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<RevokedItem>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
  };
};

export async function listRevokedItems(d1: Db, since: string | undefined, page: Page) {
  const [found] = await queryPlain(d1, [revokedItemsQuery(since, page)]);
  return found;
}
