import { and, eq, sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowJson, rowsOf } from '../../db/batch';
import { getDb, type Db } from '../../db/client';
import { isUniqueViolation } from '../../db/errors';
import { products, type ProductRow } from '../../db/schema';
import { randomBase62 } from '../../lib/crypto';
import { fieldError, notFound } from '../../lib/errors';
import { centsToAmount } from '../../lib/money';
import { isoNow } from '../../lib/time';
import { controlClass } from '../../lib/validation';
import { OPERATOR, recordClaim, type IdempotencyClaim } from '../idempotency';
import { auditEntry, jsonDetails, writeAsActor, type Actor } from '../accounts/audit-log';
import { volumePricesOf, volumePricesText, type VolumePrice } from './pricing';
import { catalogueEventIds, currentColumns, newCatalogueEvent, recordCatalogueEvent, type CatalogueChange, type CatalogueEvent } from './events';
import { eventIdsOf } from '../events/log';
import { copyToLeadVariant, hasVariants, leadVariant, packSizesText, skuTaken, standardVariant } from './variants';

export interface ProductInput {
  name: string;
  sku: string;
  category?: string | null;
  priceCents: number;
  allowedQuantities?: number[] | null;
  volumePrices?: VolumePrice[] | null;
  active?: boolean;
  cancellable?: boolean;
  description?: string | null;
  /** Replacement warranty in hours, 0..8760 (0 = none). */
  warrantyHours?: number;
  /** The referrer's percent of this product's orders: null = the shop's, 0 = none. */
  referralPercent?: number | null;
}

const packSizes = packSizesText;

/** The product's fields that are its variant's (422 on a product with several active variants). */
const VARIANT_FIELDS = [
  ['sku', 'sku'],
  ['priceCents', 'price'],
  ['volumePrices', 'volume_prices'],
  ['allowedQuantities', 'allowed_quantities'],
] as const;

const variantFieldOf = (input: Partial<ProductInput>) => VARIANT_FIELDS.find(([field]) => input[field] !== undefined);

/** A product row and its JSON snapshot (for an Idempotency-Key record), found by a condition on `products`. */
const productWhere = (condition: SQL) => sql`SELECT id, ${rowJson(products)} AS snapshot FROM products WHERE ${condition}`;

/**
 * One batch: the insert, then (with an Idempotency-Key) its record. The new row is found by its sku and creation
 * time, both known before the batch, so a fault that hid the outcome is settled by looking it up.
 */
export async function createProduct(d1: Db, actor: Actor, input: ProductInput, claim?: IdempotencyClaim): Promise<ProductRow> {
  const now = isoNow();
  const created = sql`sku = ${input.sku} AND created_at = ${now}`;
  try {
    const insert = getDb(d1)
      .insert(products)
      .values({
        name: input.name,
        sku: input.sku,
        category: input.category ?? null,
        priceCents: input.priceCents,
        allowedQuantities: packSizes(input.allowedQuantities) ?? null,
        volumePrices: volumePricesText(input.volumePrices ?? null),
        active: input.active === false ? 0 : 1,
        cancellable: input.cancellable === false ? 0 : 1,
        description: input.description ?? null,
        warrantyHours: input.warrantyHours ?? 0,
        referralPercent: input.referralPercent ?? null,
        stockCount: 0,
        createdAt: now,
        updatedAt: now,
      })
      .getSQL();
    const { reads } = await writeAsActor(d1, actor, {
      writes: [
        insert,
        // Made without variants: exactly one, `Standard`, carrying the product's sku, price and pack sizes.
        standardVariant(created),
        ...(claim ? recordClaim(OPERATOR, claim, productWhere(created)) : []),
        productAudit(actor, 'product.created', input, created, now),
      ],
      reads: [sql`SELECT ${columnsOf(products)} FROM products WHERE ${created}`],
      committed: ([product]) => rowsOf(product).length > 0,
    });
    return rowsOf<ProductRow>(reads[0])[0];
  } catch (err) {
    if (isUniqueViolation(err, 'products.sku') || isUniqueViolation(err, 'product_variants.sku')) throw skuTaken();
    throw err;
  }
}

/** The audit entry of a product write: the fields the operator sent (prices in USD), once the row shows the write. */
function productAudit(actor: Actor, action: 'product.created' | 'product.updated', input: Partial<ProductInput>, written: SQL, now: string): SQL {
  const { priceCents, allowedQuantities, volumePrices, ...rest } = input;
  const fields = {
    ...rest,
    price: priceCents === undefined ? undefined : centsToAmount(priceCents),
    allowed_quantities: allowedQuantities,
    volume_prices: volumePrices === undefined ? undefined : volumePricesOf(volumePricesText(volumePrices)),
  };
  return auditEntry(actor, { action, target: sql`'product:' || id`, details: jsonDetails(fields), from: sql`FROM products WHERE ${written}` }, now);
}

/**
 * After an update that changes the price or the volume prices, every tier is still below the price (they fall, so the
 * first is the highest). A body with both is checked on arrival (src/schemas/operator.ts); one with either alone is
 * checked against the stored other here, in the update's own batch. `column` names the product's columns.
 */
function tiersBelowPrice(input: Partial<ProductInput>, column: (name: 'price_cents' | 'volume_prices') => SQL): SQL {
  if (input.priceCents === undefined && input.volumePrices === undefined) return sql`1`;
  const price = input.priceCents === undefined ? column('price_cents') : sql`${input.priceCents}`;
  const tiers = input.volumePrices === undefined ? column('volume_prices') : sql`${volumePricesText(input.volumePrices)}`;
  return sql`(${tiers} IS NULL OR json_extract(${tiers}, '$[0].price_cents') < ${price})`;
}

const tiersNotBelowPrice = (input: Partial<ProductInput>) =>
  input.volumePrices === undefined
    ? fieldError('price', 'price must be above every volume price of the product')
    : fieldError('volume_prices', "each volume price must be below the product's price");

/**
 * The catalogue events of a product update, written before it (so they compare with the row as it was) with the
 * entry as the update leaves it: a price change of a product that stays active, and a deactivation. With the reads
 * of their ids, for publishing.
 */
function productChangeEvents(productId: number, input: Partial<ProductInput>, now: string, origin: string): { writes: SQL[]; reads: SQL[] } {
  const after = (value: string | number | undefined, column: SQL) => (value === undefined ? column : sql`${value}`);
  const columns = {
    name: after(input.name, sql`p.name`),
    sku: after(input.sku, sql`p.sku`),
    stockCount: sql`p.stock_count`,
    priceCents: after(input.priceCents, sql`p.price_cents`),
    cancellable: after(input.cancellable === undefined ? undefined : input.cancellable ? 1 : 0, sql`p.cancellable`),
  };
  const activeAfter = after(input.active === undefined ? undefined : input.active ? 1 : 0, sql`p.active`);
  // An update its guard refuses reports nothing (prices of a product with several active variants are refused).
  const applies = sql`${tiersBelowPrice(input, (name) => sql.raw(`p.${name}`))} AND ${variantFieldOf(input) ? sql`p.active_variants <= 1` : sql`1`}`;
  // The product's own prices are its one variant's.
  const variant = sql`CASE WHEN p.active_variants <= 1 THEN ${leadVariant(sql`p.id`)} END`;
  const changes: Array<[CatalogueEvent, SQL]> = [];
  const tiersAfter = input.volumePrices === undefined ? undefined : volumePricesText(input.volumePrices);
  // The product's sku and prices are its one variant's: the entry's `variants` show them as the update leaves them.
  const variantAfter = {
    variantId: leadVariant(sql`p.id`),
    sku: input.sku === undefined ? undefined : sql`${input.sku}`,
    priceCents: input.priceCents === undefined ? undefined : sql`${input.priceCents}`,
    volumePrices: tiersAfter === undefined ? undefined : sql`${tiersAfter}`,
  };
  if (input.priceCents !== undefined || tiersAfter !== undefined) {
    // Volume prices are prices too: a change of either tells the subscribers.
    const priceDiffers = input.priceCents === undefined ? sql`0` : sql`p.price_cents <> ${input.priceCents}`;
    const tiersDiffer = tiersAfter === undefined ? sql`0` : sql`p.volume_prices IS NOT ${tiersAfter}`;
    const priceChanged = newCatalogueEvent('product.price_changed', now, origin);
    const priced = { ...columns, volumePrices: tiersAfter === undefined ? sql`p.volume_prices` : sql`${tiersAfter}`, variantAfter };
    changes.push([priceChanged, recordCatalogueEvent(priceChanged, productId, sql`(${priceDiffers} OR ${tiersDiffer}) AND ${activeAfter} = 1 AND ${applies}`, priced, sql`p.price_cents`, variant)]);
  }
  if (input.active === false) {
    const deactivated = newCatalogueEvent('product.unavailable', now, origin);
    changes.push([deactivated, recordCatalogueEvent(deactivated, productId, sql`p.active = 1 AND ${applies}`, { ...columns, variantAfter }, undefined, variant)]);
  }
  return { writes: changes.map(([, write]) => write), reads: changes.map(([event]) => catalogueEventIds(event)) };
}

/** One batch: the update, then (with an Idempotency-Key) its record; its `updated_at`, generated here, says it applied. */
export async function updateProduct(
  d1: Db,
  actor: Actor,
  productId: number,
  input: Partial<ProductInput>,
  { origin, claim, publish }: CatalogueChange,
): Promise<ProductRow> {
  const now = isoNow();
  const catalogue = productChangeEvents(productId, input, now, origin);
  const updated = sql`id = ${productId} AND updated_at = ${now}`;
  const variantField = variantFieldOf(input);
  // A product with several active variants has no price of its own: its variants do.
  const oneVariant = variantField ? sql`active_variants <= 1` : sql`1`;
  try {
    const update = getDb(d1)
      .update(products)
      .set({
        name: input.name,
        sku: input.sku,
        category: input.category,
        priceCents: input.priceCents,
        allowedQuantities: packSizes(input.allowedQuantities),
        volumePrices: input.volumePrices === undefined ? undefined : volumePricesText(input.volumePrices),
        active: input.active === undefined ? undefined : input.active ? 1 : 0,
        cancellable: input.cancellable === undefined ? undefined : input.cancellable ? 1 : 0,
        description: input.description,
        warrantyHours: input.warrantyHours,
        referralPercent: input.referralPercent,
        updatedAt: now,
      })
      .where(and(eq(products.id, productId), tiersBelowPrice(input, (name) => sql.raw(name)), oneVariant))
      .getSQL();
    const { reads } = await writeAsActor(d1, actor, {
      writes: [
        ...catalogue.writes,
        update,
        ...(variantField ? [copyToLeadVariant(productId, updated)] : []),
        ...(claim ? recordClaim(OPERATOR, claim, productWhere(updated)) : []),
        productAudit(actor, 'product.updated', input, updated, now),
      ],
      reads: [sql`SELECT ${columnsOf(products)} FROM products WHERE ${updated}`, sql`SELECT active_variants AS activeVariants FROM products WHERE id = ${productId}`, ...catalogue.reads],
      committed: ([product]) => rowsOf(product).length > 0,
    });
    const [product] = rowsOf<ProductRow>(reads[0]);
    if (!product) {
      const [found] = rowsOf<{ activeVariants: number }>(reads[1]);
      if (!found) throw notFound('Product');
      throw variantField && found.activeVariants > 1 ? hasVariants(variantField[1]) : tiersNotBelowPrice(input);
    }
    publish?.(reads.slice(2).flatMap(eventIdsOf));
    return product;
  } catch (err) {
    if (isUniqueViolation(err, 'products.sku') || isUniqueViolation(err, 'product_variants.sku')) throw skuTaken();
    throw err;
  }
}

export const MAX_ITEMS_PER_UPLOAD = 10_000;
export const MAX_ITEM_LENGTH = 4096;

/** Trimmed, non-blank items; duplicates (within the call or already stocked) are skipped by the unique index. */
export const normaliseItems = (items: string[]) => items.map((item) => item.trim()).filter((item) => item.length > 0);

/**
 * A control character an item may not contain: those no human text may hold (C0 with the tab, DEL, C1, bidirectional
 * controls: src/lib/validation.ts). Buyers receive items as text, one per line in the export, and fields inside an
 * item are separated by a visible character (`login:password`).
 */
export const ITEM_CONTROL = new RegExp(`[${controlClass()}]`);

/**
 * Upload items, trimmed and non-blank: the one validator of the admin API (JSON and text bodies) and the console's
 * upload (form and file), so an item one path refuses the other refuses too (422 on `items`).
 */
export function checkedUpload(raw: string[]): string[] {
  const items = normaliseItems(raw);
  if (items.length > MAX_ITEMS_PER_UPLOAD) throw fieldError('items', `at most ${MAX_ITEMS_PER_UPLOAD} items per call`);
  // Characters are code points, as JSON Schema counts them.
  if (items.some((item) => [...item].length > MAX_ITEM_LENGTH)) throw fieldError('items', `an item may be at most ${MAX_ITEM_LENGTH} characters`);
  if (items.some((item) => /[\r\n]/.test(item))) throw fieldError('items', 'an item may not contain line breaks');
  if (items.some((item) => ITEM_CONTROL.test(item))) throw fieldError('items', 'an item may not contain control characters (NUL, escape...); a tab is allowed');
  return items;
}

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
 * Add stock items in one batch, keyed on an upload reference generated here: first the upload's row; then, per JSON
 * chunk (D1 binds at most 2 MB per value: a 16 MB upload, the body limit, makes at most 17 chunks, so the batch stays
 * under the 50 statements a Free-plan invocation may run), the count of its distinct items not stored yet added to
 * the upload's row, then the chunk's INSERT; then the skipped count and stock_count; then (with an Idempotency-Key)
 * its record. A fault that hid the outcome is settled by the upload's row, whose counts are this upload's own,
 * whatever a retry would find.
 */
export async function addStock(
  d1: Db,
  actor: Actor,
  productId: number,
  items: string[],
  { origin, claim, publish }: CatalogueChange,
  variantId: number | null = null,
): Promise<StockUpload> {
  const now = isoNow();
  const restocked = newCatalogueEvent('product.restocked', now, origin);
  const reference = `upl_${randomBase62(24)}`;
  const uploaded = sql`EXISTS (SELECT 1 FROM stock_uploads WHERE reference = ${reference})`;
  const variant = sql`(SELECT variant_id FROM stock_uploads WHERE reference = ${reference})`;
  const outcome = sql`
    SELECT u.id, u.added, u.skipped, v.stock_count AS stockCount, u.variant_id AS variantId
    FROM stock_uploads u JOIN product_variants v ON v.id = u.variant_id
    WHERE u.reference = ${reference}`;
  const snapshot = sql`SELECT o.id, json_object('added', o.added, 'skipped', o.skipped, 'stockCount', o.stockCount, 'variantId', o.variantId) AS snapshot FROM (${outcome}) AS o`;
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      sql`INSERT INTO stock_uploads (reference, product_id, added, skipped, created_at, variant_id)
          SELECT ${reference}, p.id, 0, 0, ${now}, v.id FROM products p JOIN product_variants v ON ${uploadVariant(variantId)}
          WHERE p.id = ${productId}`,
      // Earlier chunks are stored before a later one is counted, so an item repeated across chunks counts once.
      ...jsonChunks(items).flatMap((chunk) => [
        sql`
          UPDATE stock_uploads SET added = added + (
            SELECT count(DISTINCT j.value) FROM json_each(${chunk}) AS j
            WHERE NOT EXISTS (SELECT 1 FROM stock_items s WHERE s.product_id = ${productId} AND s.content = j.value))
          WHERE reference = ${reference}`,
        sql`
          INSERT OR IGNORE INTO stock_items (product_id, content, status, created_at, variant_id)
          SELECT ${productId}, j.value, 'available', ${now}, ${variant} FROM json_each(${chunk}) AS j
          WHERE ${uploaded}
          ORDER BY j.key`,
      ]),
      sql`UPDATE stock_uploads SET skipped = ${items.length} - added WHERE reference = ${reference}`,
      sql`
        UPDATE product_variants SET stock_count = (SELECT count(*) FROM stock_items WHERE variant_id = ${variant} AND status = 'available')
        WHERE id = ${variant}`,
      // Its product's count follows (the trigger of migration 0031).
      // From 0: the variant's count now is exactly what this upload added.
      recordCatalogueEvent(
        restocked,
        productId,
        sql`p.active = 1 AND (SELECT active = 1 AND stock_count > 0 AND stock_count = (SELECT added FROM stock_uploads WHERE reference = ${reference})
                              FROM product_variants WHERE id = ${variant})`,
        currentColumns,
        undefined,
        variant,
      ),
      ...(claim ? recordClaim(OPERATOR, claim, snapshot) : []),
      // The counts only: never the items.
      auditEntry(
        actor,
        {
          action: 'stock.added',
          target: sql`'product:' || product_id`,
          details: sql`json_object('added', added, 'skipped', skipped, 'variant_id', variant_id)`,
          from: sql`FROM stock_uploads WHERE reference = ${reference}`,
        },
        now,
      ),
    ],
    reads: [
      outcome,
      catalogueEventIds(restocked),
      sql`SELECT (SELECT count(*) FROM product_variants WHERE product_id = p.id) AS variants FROM products p WHERE p.id = ${productId}`,
    ],
    committed: ([upload]) => rowsOf(upload).length > 0,
  });
  const [upload] = rowsOf<StockUpload>(reads[0]);
  if (!upload) {
    if (rowsOf(reads[2]).length === 0) throw notFound('Product');
    throw variantId === null
      ? fieldError('variant_id', `This product has several variants: name one (variant_id).`)
      : fieldError('variant_id', 'variant_id is not a variant of this product.');
  }
  publish?.(eventIdsOf(reads[1]));
  return upload;
}

/**
 * The variant an upload fills, joined as `v` with its product `p`: the one named (if the product's), else the
 * product's only variant, or its only active one.
 */
const uploadVariant = (variantId: number | null) =>
  variantId === null
    ? sql`v.id = (SELECT id FROM product_variants WHERE product_id = p.id ORDER BY active DESC, position, id LIMIT 1)
          AND (p.active_variants = 1 OR (SELECT count(*) FROM product_variants WHERE product_id = p.id) = 1)`
    : sql`v.id = ${variantId} AND v.product_id = p.id`;

/** What an upload reports (and what its replay renders from). */
export interface StockUpload {
  added: number;
  skipped: number;
  /** The variant's available items after the upload. */
  stockCount: number;
  variantId: number;
}
