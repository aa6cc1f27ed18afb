import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import { notFound } from '../../lib/errors';
import type { Query } from '../caller';
import { LISTED, variantsOf, type StockEntry } from './stock';

// What a buyer browses: the active products, filtered by category and a part of the name, a page at a time; and one
// product with its description. Read in the page's own batch (the dashboard's proves the session; /shop has none).

export const SHOP_PAGE_SIZE = 48;

export interface ShopFilter {
  category?: string;
  /** A part of the product's name, case-insensitive (ASCII), every character as itself (instr, not LIKE: D1 limits
   * LIKE patterns to 50 bytes, and `%` or `_` would be wildcards). */
  q?: string;
  page: number;
}

export interface ShopListing {
  entries: StockEntry[];
  total: number;
  /** Every category of an active product, for the filter. */
  categories: string[];
}

export type ProductDetail = StockEntry & { description: string | null };

const entryColumns = sql`id AS productId, name AS productName, sku, stock_count AS stockCount, price_cents AS priceCents, cancellable,
  allowed_quantities AS allowedQuantities, category, image, volume_prices AS volumePrices, warranty_hours AS warrantyHours,
  active_variants AS activeVariants, ${variantsOf(sql`products.id`)} AS variants`;


export const shopQuery = ({ category, q, page }: ShopFilter): Query<ShopListing> => {
  const where = sql`${LISTED}${category ? sql` AND category = ${category}` : sql``}${q ? sql` AND instr(lower(name), lower(${q})) > 0` : sql``}`;
  return {
    reads: [
      sql`SELECT ${entryColumns} FROM products WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${SHOP_PAGE_SIZE} OFFSET ${(page - 1) * SHOP_PAGE_SIZE}`,
      sql`SELECT count(*) AS total FROM products WHERE ${where}`,
      sql`SELECT DISTINCT category FROM products WHERE ${LISTED} AND category IS NOT NULL ORDER BY category`,
    ],
    parse: ([rows, total, categories]) => ({
      entries: rowsOf<StockEntry>(rows),
      total: rowsOf<{ total: number }>(total)[0]?.total ?? 0,
      categories: rowsOf<{ category: string }>(categories).map((r) => r.category),
    }),
  };
};

/** An active product with its description; an inactive or unknown one is a 404. */
export const productDetailQuery = (productId: number): Query<ProductDetail> => ({
  reads: [sql`SELECT ${entryColumns}, description FROM products WHERE id = ${productId} AND ${LISTED}`],
  parse: ([rows]) => {
    const [product] = rowsOf<ProductDetail>(rows);
    if (!product) throw notFound('Product');
    return product;
  },
});
