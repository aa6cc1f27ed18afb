import { and, eq, inArray, sql } from 'drizzle-orm';
import { getDb, type Db } from '../db/client';
import { products } from '../db/schema';
import { rowsOf, toStatement } from '../db/batch';
import { notFound } from '../lib/errors';
import type { Query } from './caller';

// Public stock reads only the denormalised products.stock_count: the cost does not grow with the number of items.

const stockColumns = {
  productId: products.id,
  productName: products.name,
  sku: products.sku,
  stockCount: products.stockCount,
  priceCents: products.priceCents,
  cancellable: products.cancellable,
  allowedQuantities: products.allowedQuantities,
};

export type StockEntry = {
  productId: number;
  productName: string;
  sku: string;
  stockCount: number;
  priceCents: number;
  cancellable: number;
  /** JSON array of pack sizes, or null for any quantity (the dashboard's shop shows them; /stock does not). */
  allowedQuantities: string | null;
};

/** The shop's list for a signed-in page, read in the page's own batch (it proves the session). */
export const activeStockQuery = (): Query<StockEntry[]> => ({
  reads: [
    sql`SELECT id AS productId, name AS productName, sku, stock_count AS stockCount, price_cents AS priceCents, cancellable,
               allowed_quantities AS allowedQuantities
        FROM products WHERE active = 1 ORDER BY created_at DESC, id DESC`,
  ],
  parse: ([rows]) => rowsOf<StockEntry>(rows),
});

export async function listStock(d1: Db): Promise<StockEntry[]> {
  const query = activeStockQuery();
  return query.parse(await d1.batch(query.reads.map((read) => toStatement(d1, read))));
}

export async function getStock(d1: Db, productId: number): Promise<StockEntry> {
  const [entry] = await getDb(d1)
    .select(stockColumns)
    .from(products)
    .where(and(eq(products.id, productId), eq(products.active, 1)));
  if (!entry) throw notFound('Product');
  return entry;
}

/** Counts for the given ids in the order asked; unknown and inactive products count 0. */
export async function checkStock(d1: Db, productIds: number[]) {
  const rows = await getDb(d1)
    .select({ productId: products.id, stockCount: products.stockCount })
    .from(products)
    .where(and(inArray(products.id, productIds), eq(products.active, 1)));
  const counts = new Map(rows.map((r) => [r.productId, r.stockCount]));
  return productIds.map((productId) => ({ productId, stockCount: counts.get(productId) ?? 0 }));
}

export async function stockByCategory(d1: Db) {
  const category = sql<string>`coalesce(${products.category}, 'uncategorized')`;
  return getDb(d1)
    .select({
      category,
      totalProducts: sql<number>`count(*)`,
      totalStock: sql<number>`coalesce(sum(${products.stockCount}), 0)`,
    })
    .from(products)
    .where(eq(products.active, 1))
    .groupBy(category)
    .orderBy(category);
}
