import { and, eq, sql, type SQL } from 'drizzle-orm';
import { getDb, type Db } from '../../db/client';
import { products } from '../../db/schema';
import { toStatement } from '../../db/batch';
import { amountJson, booleanJson } from '../../db/json';
import { notFound } from '../../lib/errors';
import { volumePricesJson } from './pricing';

// Public stock reads only the denormalised products.stock_count: the cost does not grow with the number of items.

/** A change not written yet, for an event written before it: one variant's values as they will be. */
export interface VariantOverride {
  variantId: SQL;
  priceCents?: SQL;
  volumePrices?: SQL;
  sku?: SQL;
  active?: SQL;
}

/**
 * The active variants of the product `productId` (SQL), by position, as a JSON array of `StockVariant` (with
 * `override`, one variant as a change about to be written leaves it).
 */
export const variantsOf = (productId: SQL, override?: VariantOverride) => {
  const value = (column: string, after?: SQL) =>
    after && override ? sql`CASE WHEN v.id = ${override.variantId} THEN ${after} ELSE v.${sql.raw(column)} END` : sql`v.${sql.raw(column)}`;
  return sql`(SELECT json_group_array(json_object('id', v.id, 'name', v.name, 'sku', ${value('sku', override?.sku)},
  'priceCents', ${value('price_cents', override?.priceCents)}, 'volumePrices', ${value('volume_prices', override?.volumePrices)},
  'allowedQuantities', v.allowed_quantities, 'backorders', v.backorders, 'stockCount', v.stock_count))
  FROM (SELECT * FROM product_variants v WHERE v.product_id = ${productId} AND ${value('active', override?.active)} = 1 ORDER BY v.position, v.id) v)`;
};

const stockColumns = {
  productId: products.id,
  productName: products.name,
  sku: products.sku,
  stockCount: products.stockCount,
  priceCents: products.priceCents,
  cancellable: products.cancellable,
  allowedQuantities: products.allowedQuantities,
  category: products.category,
  image: products.image,
  volumePrices: products.volumePrices,
  warrantyHours: products.warrantyHours,
  activeVariants: products.activeVariants,
  variants: sql<string>`${variantsOf(sql`products.id`)}`.as('variants'),
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
  category: string | null;
  /** '<sha256>.<ext>' in the MEDIA bucket, or null. */
  image: string | null;
  /** JSON volume tiers (src/services/catalogue/pricing.ts), or null. */
  volumePrices: string | null;
  /** Replacement warranty in hours (0 = none). */
  warrantyHours: number;
  /** How many variants are active: a buyer picks one when there are several. */
  activeVariants: number;
  /** JSON of the active variants, by position (`variantsOf`): parse with `variantsIn`. */
  variants: string;
};

/** A variant as pages and the public entry are rendered from. */
export interface StockVariant {
  id: number;
  name: string;
  sku: string;
  priceCents: number;
  volumePrices: string | null;
  allowedQuantities: string | null;
  backorders: number;
  stockCount: number;
}

/** The variants of an entry: JSON text from a read, or already parsed (an event's snapshot); none in an older event. */
export const variantsIn = (entry: { variants?: string | StockVariant[] | null }): StockVariant[] =>
  typeof entry.variants === 'string' ? (JSON.parse(entry.variants) as StockVariant[]) : (entry.variants ?? []);

/** A product is listed while it is active and has an active variant. */
export const LISTED = sql`active = 1 AND active_variants > 0`;

/**
 * The public list as one JSON array, rendered by SQLite in the shape of `presentStock` (src/routes/representations.ts)
 * and passed to the response as it is: 10,000 products make no JS object each and no JSON.stringify.
 * The aggregate reads the rows in the order of the subquery, which walks the (active, created_at, id) index backwards:
 * an ORDER BY inside json_group_array would sort the 10,000 rendered objects instead (3x the time, measured in SQLite
 * 3.51). Not flattened (an aggregate over an ordered subquery), so the order holds; test/catalogue/stock-json.test.ts checks it.
 */
export async function listStockJson(d1: Db, origin: string): Promise<string> {
  return jsonArrayOf(
    d1,
    sql`json_group_array(json_object(${stockJsonFields(origin)}))`,
    sql`FROM (SELECT * FROM products WHERE ${LISTED} ORDER BY created_at DESC, id DESC) AS products_listed`,
  );
}

export async function getStock(d1: Db, productId: number): Promise<StockEntry & { description: string | null }> {
  const [entry] = await getDb(d1)
    .select({ ...stockColumns, description: products.description })
    .from(products)
    .where(and(eq(products.id, productId), LISTED));
  if (!entry) throw notFound('Product');
  return entry;
}

/** Counts for the given ids, as a JSON array in the order asked; unknown and inactive products count 0. */
export async function checkStockJson(d1: Db, productIds: number[]): Promise<string> {
  const count = sql`coalesce(p.stock_count, 0)`;
  return jsonArrayOf(
    d1,
    sql`json_group_array(json_object('product_id', ids.value, 'stock_count', ${count}, 'in_stock', ${booleanJson(sql`${count} > 0`)}) ORDER BY ids.key)`,
    sql`FROM json_each(${JSON.stringify(productIds)}) AS ids LEFT JOIN products p ON p.id = ids.value AND p.active = 1 AND p.active_variants > 0`,
  );
}

/** Active products and their stock per category (no category: `uncategorized`), as a JSON array by category. */
export async function stockByCategoryJson(d1: Db): Promise<string> {
  return jsonArrayOf(
    d1,
    sql`json_group_array(json_object('category', category, 'total_products', total_products, 'total_stock', total_stock) ORDER BY category)`,
    sql`FROM (SELECT coalesce(category, 'uncategorized') AS category, count(*) AS total_products, coalesce(sum(stock_count), 0) AS total_stock
              FROM products WHERE ${LISTED} GROUP BY 1)`,
  );
}

// allowed_quantities is stored as the JSON array it is shown as (src/services/catalogue/products.ts writes it so).
const stockJsonFields = (origin: string) => sql`'product_id', id, 'product_name', name, 'sku', sku, 'stock_count', stock_count,
  'in_stock', ${booleanJson(sql`stock_count > 0`)}, 'price', ${amountJson(sql`price_cents`)}, 'cancellable', ${booleanJson(sql`cancellable = 1`)},
  'category', category, 'image_url', ${origin + '/media/'} || image, 'final_sale', ${booleanJson(sql`cancellable = 0`)},
  'allowed_quantities', json(allowed_quantities), 'volume_prices', ${volumePricesJson(sql`volume_prices`)}, 'warranty_hours', warranty_hours,
  'variants', ${publicVariantsJson}`;

/** The public entry's `variants`, rendered by SQLite in the shape of `presentPublicVariant` (src/routes/representations.ts). */
const publicVariantsJson = sql`(SELECT json_group_array(json_object('variant_id', v.id, 'name', v.name, 'sku', v.sku,
  'price', ${amountJson(sql`v.price_cents`)}, 'volume_prices', ${volumePricesJson(sql`v.volume_prices`)},
  'allowed_quantities', json(v.allowed_quantities), 'backorders', ${booleanJson(sql`v.backorders = 1`)},
  'stock_count', v.stock_count, 'in_stock', ${booleanJson(sql`v.stock_count > 0`)}))
  FROM (SELECT * FROM product_variants WHERE product_id = products_listed.id AND active = 1 ORDER BY position, id) v)`;

/** One statement, one round trip: the aggregate's text, never parsed here. */
async function jsonArrayOf(d1: Db, aggregate: SQL, from: SQL): Promise<string> {
  const json = await toStatement(d1, sql`SELECT ${aggregate} AS json ${from}`).first<string>('json');
  return json ?? '[]';
}
