import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, runBatch } from '../../db/batch';
import type { Db } from '../../db/client';
import { isoNow } from '../../lib/time';

// The test-mode sandbox's catalogue: a copy of the live shop's active products, never a join (a D1 batch runs on
// one database). One read of the live products, then one sandbox batch: every product copied by id (name, SKU,
// category, description, image, price, volume prices, pack sizes, final sale) and every variant by id (so a
// `variant_id` works in both), the sandbox's other products deactivated, and its stock generated so each variant has
// exactly as many available items as it has live, each a code `TEST-<SKU>-<random>`. Refreshed by every scheduled run and after each operator change to the catalogue
// (src/middleware/sandbox-refresh.ts).

/** The live columns the sandbox copies (and the live stock count its generated stock matches). */
const COPIED = sql`id, name, sku, category, description, image, price_cents, allowed_quantities, volume_prices, cancellable, warranty_hours, created_at`;
/** The live variants' columns the sandbox copies, with the same ids (and their stock counts). */
const VARIANT_COPIED = sql`id, product_id, name, sku, price_cents, volume_prices, allowed_quantities, active, position, backorders, backorder_limit,
  stock_count, created_at`;

/** A sandbox batch's JSON parameter stays well below D1's 2 MB per value. */
const MAX_CHUNK_CHARS = 1_000_000;

export interface MirrorReport {
  products: number;
  deactivated: number;
  itemsAdded: number;
  itemsRemoved: number;
  /** D1 statements this refresh sent: the live reads (2) and the sandbox batch's (2 a chunk of products, 5 a chunk of variants, 3). */
  statements: number;
}

const field = (name: string) => sql`json_extract(p.value, ${`$.${name}`})`;

/** The live products in JSON arrays of at most MAX_CHUNK_CHARS characters. */
function chunksOf(products: Record<string, unknown>[]): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const product of products) {
    const json = JSON.stringify(product);
    if (size + json.length > MAX_CHUNK_CHARS && current.length > 0) {
      chunks.push(`[${current.join(',')}]`);
      current = [];
      size = 0;
    }
    current.push(json);
    size += json.length + 1;
  }
  if (current.length > 0) chunks.push(`[${current.join(',')}]`);
  return chunks;
}

/** The statements that make the sandbox's copy of these live products (a JSON array) what they are live. */
function copyStatements(chunk: string, now: string): SQL[] {
  const products = sql`json_each(${chunk}) p`;
  const same = (column: string) => sql`products.${sql.raw(column)} IS excluded.${sql.raw(column)}`;
  const columns = ['name', 'sku', 'category', 'description', 'image', 'price_cents', 'allowed_quantities', 'volume_prices', 'cancellable', 'warranty_hours', 'active'];
  return [
    // A SKU that moved to another product live is moved out of the way first (SKUs are unique).
    sql`UPDATE products SET sku = '~' || id || '~' || sku
        WHERE sku IN (SELECT ${field('sku')} FROM ${products})
          AND NOT EXISTS (SELECT 1 FROM ${products} WHERE ${field('id')} = products.id AND ${field('sku')} = products.sku)`,
    sql`INSERT INTO products (id, name, sku, category, description, image, price_cents, allowed_quantities, volume_prices, cancellable,
                              warranty_hours, active, stock_count, created_at, updated_at)
        SELECT ${field('id')}, ${field('name')}, ${field('sku')}, ${field('category')}, ${field('description')}, ${field('image')},
               ${field('price_cents')}, ${field('allowed_quantities')}, ${field('volume_prices')}, ${field('cancellable')},
               ${field('warranty_hours')}, 1, 0, ${field('created_at')}, ${now}
        FROM ${products} WHERE true
        ON CONFLICT (id) DO UPDATE SET
          ${sql.join(columns.map((c) => sql`${sql.raw(c)} = excluded.${sql.raw(c)}`), sql`, `)}, updated_at = excluded.updated_at
        WHERE NOT (${sql.join(columns.map(same), sql` AND `)})`,
  ];
}

/**
 * The statements that make the sandbox's copy of these live variants (a JSON array) what they are live, with the
 * same ids, and their stock: as many available items as live, generated.
 */
function variantStatements(chunk: string, now: string): SQL[] {
  const variants = sql`json_each(${chunk}) p`;
  const columns = ['product_id', 'name', 'sku', 'price_cents', 'volume_prices', 'allowed_quantities', 'active', 'position', 'backorders', 'backorder_limit'];
  const same = (column: string) => sql`product_variants.${sql.raw(column)} IS excluded.${sql.raw(column)}`;
  return [
    sql`UPDATE product_variants SET sku = '~' || id || '~' || sku
        WHERE sku IN (SELECT ${field('sku')} FROM ${variants})
          AND NOT EXISTS (SELECT 1 FROM ${variants} WHERE ${field('id')} = product_variants.id AND ${field('sku')} = product_variants.sku)`,
    sql`INSERT INTO product_variants (id, ${sql.raw(columns.join(', '))}, stock_count, created_at, updated_at)
        SELECT ${field('id')}, ${sql.join(columns.map((c) => field(c)), sql`, `)}, 0, ${field('created_at')}, ${now}
        FROM ${variants} WHERE true
        ON CONFLICT (id) DO UPDATE SET
          ${sql.join(columns.map((c) => sql`${sql.raw(c)} = excluded.${sql.raw(c)}`), sql`, `)}, updated_at = excluded.updated_at
        WHERE NOT (${sql.join(columns.map(same), sql` AND `)})`,
    // Too many available items (or items left on another product by a variant that moved): the newest go.
    sql`DELETE FROM stock_items WHERE id IN (
          SELECT id FROM (
            SELECT s.id, s.product_id <> ${field('product_id')} AS moved,
                   row_number() OVER (PARTITION BY s.variant_id ORDER BY s.id DESC) AS n, ${field('stock_count')} AS target
            FROM ${variants} JOIN stock_items s ON s.variant_id = ${field('id')} AND s.status = 'available')
          WHERE n > target OR moved)`,
    // Too few: generated codes, as many as missing.
    sql`WITH RECURSIVE missing (product_id, variant_id, sku, k) AS (
          SELECT ${field('product_id')}, ${field('id')}, ${field('sku')},
                 ${field('stock_count')} - (SELECT count(*) FROM stock_items s WHERE s.variant_id = ${field('id')} AND s.status = 'available')
          FROM ${variants}
          UNION ALL SELECT product_id, variant_id, sku, k - 1 FROM missing WHERE k > 1)
        INSERT INTO stock_items (product_id, variant_id, content, status, created_at)
        SELECT product_id, variant_id, 'TEST-' || sku || '-' || upper(hex(randomblob(8))), 'available', ${now} FROM missing WHERE k > 0`,
    sql`UPDATE product_variants SET stock_count = (SELECT count(*) FROM stock_items s WHERE s.variant_id = product_variants.id AND s.status = 'available')
        WHERE id IN (SELECT ${field('id')} FROM ${variants})`,
  ];
}

/**
 * Make the sandbox's catalogue the live shop's, now. Safe to run at any time and concurrently with itself or with
 * purchases in the sandbox: each sandbox batch is one transaction and sets counts from what it finds.
 */
export async function refreshSandboxMirror(live: Db, sandbox: Db, nowMs = Date.now()): Promise<MirrorReport> {
  const now = isoNow(nowMs);
  const [found, foundVariants] = await runBatch(live, [
    sql`SELECT ${COPIED} FROM products WHERE active = 1 ORDER BY id`,
    sql`SELECT ${VARIANT_COPIED} FROM product_variants WHERE product_id IN (SELECT id FROM products WHERE active = 1) ORDER BY id`,
  ]);
  const products = rowsOf<Record<string, unknown>>(found);
  const ids = JSON.stringify(products.map((p) => p.id));
  const chunks = chunksOf(products);
  const variants = rowsOf<Record<string, unknown>>(foundVariants);
  const variantIds = JSON.stringify(variants.map((v) => v.id));
  const variantChunks = chunksOf(variants);
  const productStatements = chunks.flatMap((chunk) => copyStatements(chunk, now));
  const statements = [
    ...productStatements,
    ...variantChunks.flatMap((chunk) => variantStatements(chunk, now)),
    // A variant of a mirrored product that is not live (all its live ones came above) stops selling here.
    sql`UPDATE product_variants SET active = 0, updated_at = ${now}
        WHERE active = 1 AND product_id IN (SELECT value FROM json_each(${ids})) AND id NOT IN (SELECT value FROM json_each(${variantIds}))`,
    sql`UPDATE products SET (active_variants, stock_count) = (
          SELECT count(*), coalesce(sum(stock_count), 0) FROM product_variants v WHERE v.product_id = products.id AND v.active = 1)
        WHERE id IN (SELECT value FROM json_each(${ids}))`,
    sql`UPDATE products SET active = 0, updated_at = ${now} WHERE active = 1 AND id NOT IN (SELECT value FROM json_each(${ids}))`,
  ];
  const results = await runBatch(sandbox, statements);
  const changes = (i: number) => results[i]?.meta.changes ?? 0;
  const per = 5;
  const sum = (offset: number) => variantChunks.reduce((total, _, i) => total + changes(productStatements.length + i * per + offset), 0);
  return { products: products.length, deactivated: changes(statements.length - 1), itemsRemoved: sum(2), itemsAdded: sum(3), statements: 2 + statements.length };
}
