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

// D1 refuses a bound value over 2 MB (a string's UTF-8 bytes): an upload travels as JSON arrays kept well under it.
const MAX_CHUNK_BYTES = 1_000_000;

/** Split items into JSON arrays of at most MAX_CHUNK_BYTES each (an item is at most 4,096 characters). */
export function jsonChunks(items: string[]): string[] {
  const encoder = new TextEncoder();
  const chunks: string[][] = [[]];
  let bytes = 2;
  for (const item of items) {
    const size = encoder.encode(JSON.stringify(item)).length + 1;
    if (bytes + size > MAX_CHUNK_BYTES && chunks[chunks.length - 1].length > 0) {
      chunks.push([]);
      bytes = 2;
    }
    chunks[chunks.length - 1].push(item);
    bytes += size;
  }
  return chunks.map((chunk) => JSON.stringify(chunk));
}

/**
 * Add stock items in one batch: one INSERT per JSON chunk (one bound parameter each: 10,000 items of 4,096
 * characters make about 41 chunks, under the 50 statements a Free-plan invocation may run), then stock_count
 * recomputed from the available items in the same transaction.
 */
export async function addStock(d1: Db, productId: number, items: string[]) {
  const now = isoNow();
  const chunks = jsonChunks(items);
  const results = await runBatch(d1, [
    ...chunks.map(
      (chunk) => sql`
        INSERT OR IGNORE INTO stock_items (product_id, content, status, created_at)
        SELECT ${productId}, j.value, 'available', ${now} FROM json_each(${chunk}) AS j
        WHERE EXISTS (SELECT 1 FROM products WHERE id = ${productId})
        ORDER BY j.key`,
    ),
    sql`
      UPDATE products SET stock_count = (SELECT count(*) FROM stock_items WHERE product_id = ${productId} AND status = 'available')
      WHERE id = ${productId}`,
    sql`SELECT stock_count AS stockCount FROM products WHERE id = ${productId}`,
  ]);
  const [product] = rowsOf<{ stockCount: number }>(results[results.length - 1]);
  if (!product) throw notFound('Product');
  const added = results.slice(0, chunks.length).reduce((sum, result) => sum + changesOf(result), 0);
  return { added, skipped: items.length - added, stockCount: product.stockCount };
}
