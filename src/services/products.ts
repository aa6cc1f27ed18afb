import { eq, sql } from 'drizzle-orm';
import { changesOf, rowsOf, runBatch } from '../db/batch';
import { getDb, type Db } from '../db/client';
import { isUniqueViolation } from '../db/errors';
import { products, type ProductRow } from '../db/schema';
import { fieldError, notFound } from '../lib/errors';
import { isoNow } from '../lib/time';

export interface ProductInput {
  name: string;
  sku: string;
  category?: string | null;
  priceCents: number;
  allowedQuantities?: number[] | null;
  active?: boolean;
  cancellable?: boolean;
}

const skuTaken = () => fieldError('sku', 'The sku has already been taken.');

const packSizes = (quantities: number[] | null | undefined) =>
  quantities === undefined ? undefined : quantities === null ? null : JSON.stringify([...new Set(quantities)].sort((a, b) => a - b));

export async function createProduct(d1: Db, input: ProductInput): Promise<ProductRow> {
  const now = isoNow();
  try {
    const [product] = await getDb(d1)
      .insert(products)
      .values({
        name: input.name,
        sku: input.sku,
        category: input.category ?? null,
        priceCents: input.priceCents,
        allowedQuantities: packSizes(input.allowedQuantities) ?? null,
        active: input.active === false ? 0 : 1,
        cancellable: input.cancellable === false ? 0 : 1,
        stockCount: 0,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return product;
  } catch (err) {
    if (isUniqueViolation(err, 'products.sku')) throw skuTaken();
    throw err;
  }
}

export async function updateProduct(d1: Db, productId: number, input: Partial<ProductInput>): Promise<ProductRow> {
  try {
    const [product] = await getDb(d1)
      .update(products)
      .set({
        name: input.name,
        sku: input.sku,
        category: input.category,
        priceCents: input.priceCents,
        allowedQuantities: packSizes(input.allowedQuantities),
        active: input.active === undefined ? undefined : input.active ? 1 : 0,
        cancellable: input.cancellable === undefined ? undefined : input.cancellable ? 1 : 0,
        updatedAt: isoNow(),
      })
      .where(eq(products.id, productId))
      .returning();
    if (!product) throw notFound('Product');
    return product;
  } catch (err) {
    if (isUniqueViolation(err, 'products.sku')) throw skuTaken();
    throw err;
  }
}

export const MAX_ITEMS_PER_UPLOAD = 10_000;

/** Trimmed, non-blank items; duplicates (within the call or already stocked) are skipped by the unique index. */
export const normaliseItems = (items: string[]) => items.map((item) => item.trim()).filter((item) => item.length > 0);

/**
 * Add stock items in one batch: a single INSERT over a JSON array (one bound parameter, whatever the count), then
 * stock_count recomputed from the available items in the same transaction.
 */
export async function addStock(d1: Db, productId: number, items: string[]) {
  const now = isoNow();
  const [inserted, , counted] = await runBatch(d1, [
    sql`
      INSERT OR IGNORE INTO stock_items (product_id, content, status, created_at)
      SELECT ${productId}, j.value, 'available', ${now} FROM json_each(${JSON.stringify(items)}) AS j
      WHERE EXISTS (SELECT 1 FROM products WHERE id = ${productId})
      ORDER BY j.key`,
    sql`
      UPDATE products SET stock_count = (SELECT count(*) FROM stock_items WHERE product_id = ${productId} AND status = 'available')
      WHERE id = ${productId}`,
    sql`SELECT stock_count AS stockCount FROM products WHERE id = ${productId}`,
  ]);
  const [product] = rowsOf<{ stockCount: number }>(counted);
  if (!product) throw notFound('Product');
  const added = changesOf(inserted);
  return { added, skipped: items.length - added, stockCount: product.stockCount };
}
