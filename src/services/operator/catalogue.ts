import { sql } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import { products, type ProductRow } from '../../db/schema';
import { notFound } from '../../lib/errors';
import type { Query } from '../caller';

// The catalogue as the operator sees it: every product, active or not, with units sold (its items in status 'sold',
// counted through stock_items_product_status; items of cancelled orders are 'revoked' and do not count).

export interface CatalogueProduct extends ProductRow {
  unitsSold: number;
}

const catalogueColumns = sql`${columnsOf(products)},
  (SELECT count(*) FROM stock_items s WHERE s.product_id = products.id AND s.status = 'sold') AS unitsSold`;

export const catalogueQuery = (active?: boolean): Query<CatalogueProduct[]> => ({
  reads: [
    sql`SELECT ${catalogueColumns} FROM products ${active === undefined ? sql`` : sql`WHERE active = ${active ? 1 : 0}`}
        ORDER BY created_at DESC, id DESC`,
  ],
  parse: ([rows]) => rowsOf<CatalogueProduct>(rows),
});

export const catalogueProductQuery = (productId: number): Query<CatalogueProduct> => ({
  reads: [sql`SELECT ${catalogueColumns} FROM products WHERE id = ${productId}`],
  parse: ([rows]) => {
    const [product] = rowsOf<CatalogueProduct>(rows);
    if (!product) throw notFound('Product');
    return product;
  },
});

/** Products at or below the low-stock threshold, lowest first (the console's overview). */
export const lowStockQuery = (threshold: number): Query<ProductRow[]> => ({
  reads: [sql`SELECT ${columnsOf(products)} FROM products WHERE active = 1 AND stock_count <= ${threshold} ORDER BY stock_count, id LIMIT 50`],
  parse: ([rows]) => rowsOf<ProductRow>(rows),
});

export type ProductName = { id: number; name: string; active: number };

/** Every product's id and name, by name (the console's product pickers). */
export const productNamesQuery: Query<ProductName[]> = {
  reads: [sql`SELECT id, name, active FROM products ORDER BY name COLLATE NOCASE, id`],
  parse: ([rows]) => rowsOf<ProductName>(rows),
};
