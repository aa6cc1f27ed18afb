import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import type { Page } from '../../lib/pagination';
import { pageWindow } from '../../lib/pagination';
import { isoNow } from '../../lib/time';
import { auditEntry, writeAsActor, type Actor } from '../accounts/audit-log';
import type { Query } from '../caller';
import { catalogueEventIds, currentColumns, newCatalogueEvent, recordCatalogueEvent, type CatalogueChange } from './events';
import { eventIdsOf } from '../events/log';

// A product's unsold items on its console page (a mistyped code must not stay for sale forever): listed, searched,
// and deleted one at a time. Sold (and revoked) items are never listed nor deletable here: they belong to orders.

export interface UnsoldItem {
  id: number;
  content: string;
  createdAt: string;
}

export const UNSOLD_ITEMS_PER_PAGE = 50;

/** A page of the product's available items (oldest first: the order they sell in), `q` a case-insensitive part. */
export const unsoldItemsQuery = (productId: number, q: string | undefined, page: Page): Query<{ rows: UnsoldItem[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  // instr(), not LIKE: no wildcard to escape and no pattern length limit (see operator-orders.ts).
  const where = sql`product_id = ${productId} AND status = 'available'${q ? sql` AND instr(lower(content), lower(${q})) > 0` : sql``}`;
  return {
    reads: [
      sql`SELECT id, content, created_at AS createdAt FROM stock_items WHERE ${where} ORDER BY id LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM stock_items WHERE ${where}`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<UnsoldItem>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
  };
};

/** One unsold item of the product, or null (sold, revoked, deleted, another product's, unknown). */
export const unsoldItemQuery = (productId: number, itemId: number): Query<UnsoldItem | null> => ({
  reads: [sql`SELECT id, content, created_at AS createdAt FROM stock_items WHERE id = ${itemId} AND product_id = ${productId} AND status = 'available'`],
  parse: ([rows]) => rowsOf<UnsoldItem>(rows)[0] ?? null,
});

/**
 * Delete one unsold item: one batch whose every statement is guarded by "the item is still available", read before
 * the DELETE that ends it: the audit entry (the item's id, never its content), the product's stock_count decrement,
 * the `product.unavailable` event when that was its last item, then the DELETE. A purchase that claimed the item
 * first (batches are serialized) leaves it sold, and this batch changes nothing: `false`.
 */
export async function deleteUnsoldItem(d1: Db, actor: Actor, productId: number, itemId: number, { origin, publish }: CatalogueChange): Promise<boolean> {
  const now = isoNow();
  const soldOut = newCatalogueEvent('product.unavailable', now, origin);
  const available = sql`EXISTS (SELECT 1 FROM stock_items WHERE id = ${itemId} AND product_id = ${productId} AND status = 'available')`;
  const variantOf = sql`(SELECT variant_id FROM stock_items WHERE id = ${itemId})`;
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      auditEntry(
        actor,
        {
          action: 'stock.item_deleted',
          target: sql`'product:' || product_id`,
          details: sql`json_object('item_id', id)`,
          from: sql`FROM stock_items WHERE id = ${itemId} AND product_id = ${productId} AND status = 'available'`,
        },
        now,
      ),
      // Its product's count follows (the trigger of migration 0031).
      sql`UPDATE product_variants SET stock_count = stock_count - 1 WHERE id = ${variantOf} AND ${available}`,
      recordCatalogueEvent(
        soldOut,
        productId,
        sql`p.active = 1 AND (SELECT active = 1 AND stock_count = 0 FROM product_variants WHERE id = ${variantOf}) AND ${available}`,
        currentColumns,
        undefined,
        variantOf,
      ),
      sql`DELETE FROM stock_items WHERE id = ${itemId} AND product_id = ${productId} AND status = 'available'`,
    ],
    reads: [
      sql`SELECT 1 FROM audit_log WHERE created_at = ${now} AND action = 'stock.item_deleted' AND target = ${`product:${productId}`}
            AND json_extract(details, '$.item_id') = ${itemId}`,
      catalogueEventIds(soldOut),
    ],
    // Settled by this batch's own audit entry (its timestamp is this call's).
    committed: ([entry]) => rowsOf(entry).length > 0,
  });
  const deleted = rowsOf(reads[0]).length > 0;
  if (deleted) publish?.(eventIdsOf(reads[1]));
  return deleted;
}
