import { and, count, desc, eq, gte, isNotNull } from 'drizzle-orm';
import { getDb, type Db } from '../db/client';
import { orders, products, stockItems } from '../db/schema';
import { pageWindow, type Page } from '../lib/pagination';

/**
 * The operator's feed of revoked items (items of cancelled orders: disclosed, refunded, to be deactivated at the
 * vendor), newest revocation first; `since` (inclusive, ISO 8601 UTC) lets a poller ask only for what is new.
 */
export async function listRevokedItems(d1: Db, since: string | undefined, page: Page) {
  const db = getDb(d1);
  const { limit, offset } = pageWindow(page);
  // `revoked_at IS NOT NULL` is the partial index's own condition (stock_items_revoked), so the index serves both reads.
  const revoked = and(isNotNull(stockItems.revokedAt), since === undefined ? undefined : gte(stockItems.revokedAt, since));
  const [rows, [{ total }]] = await db.batch([
    db
      .select({
        orderId: orders.id,
        orderNumber: orders.orderNumber,
        userId: orders.userId,
        productId: stockItems.productId,
        sku: products.sku,
        item: stockItems.content,
        revokedAt: stockItems.revokedAt,
      })
      .from(stockItems)
      .innerJoin(orders, eq(orders.id, stockItems.orderId))
      .innerJoin(products, eq(products.id, stockItems.productId))
      .where(revoked)
      .orderBy(desc(stockItems.revokedAt), desc(stockItems.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(stockItems).where(revoked),
  ]);
  return { rows, total };
}
