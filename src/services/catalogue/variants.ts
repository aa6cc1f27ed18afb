import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowJson, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { isUniqueViolation } from '../../db/errors';
import { productVariants, type VariantRow } from '../../db/schema';
import { fieldError, notFound } from '../../lib/errors';
import { centsToAmount } from '../../lib/money';
import { isoNow } from '../../lib/time';
import { OPERATOR, recordClaim } from '../idempotency';
import { auditEntry, jsonDetails, writeAsActor, type Actor } from '../accounts/audit-log';
import { eventIdsOf } from '../events/log';
import type { Query } from '../caller';
import { volumePricesOf, volumePricesText, type VolumePrice } from './pricing';
import { catalogueEventIds, currentColumns, newCatalogueEvent, recordCatalogueEvent, type CatalogueChange } from './events';

// Variants: what a buyer picks ("1 month", "3 months"). Each has its own price, volume prices, pack sizes, SKU and
// stock items. The product keeps the columns every existing client reads, and they show its variants: with one active
// variant (or none), that variant's (the "lead": active first, then by position); with several, the lowest active
// price ("from"), the lead's SKU, no volume prices or pack sizes of its own, and the stock of all active variants.
// `syncProduct` writes that in the batch of every change to a variant, so reads never join.

export const MAX_VARIANTS = 50;
export const STANDARD_VARIANT = 'Standard';

export interface VariantInput {
  name: string;
  sku: string;
  priceCents: number;
  volumePrices?: VolumePrice[] | null;
  allowedQuantities?: number[] | null;
  backorders?: boolean;
  backorderLimit?: number;
  active?: boolean;
  position?: number;
}

export const packSizesText = (quantities: number[] | null | undefined) =>
  quantities === undefined ? undefined : quantities === null ? null : JSON.stringify([...new Set(quantities)].sort((a, b) => a - b));

export const skuTaken = () => fieldError('sku', 'The sku has already been taken.');
export const hasVariants = (field: string) => fieldError(field, 'This product has variants: change it on a variant.');

/** The product's lead variant: the one its own sku, price, volume prices and pack sizes are, when it has one active. */
export const leadVariant = (productId: SQL | number) =>
  sql`(SELECT id FROM product_variants WHERE product_id = ${productId} ORDER BY active DESC, position, id LIMIT 1)`;

/** The statement that makes the product's columns show its variants (after any change to them, in the same batch). */
export const syncProduct = (productId: SQL | number) => sql`
  UPDATE products SET (active_variants, stock_count, price_cents, sku, volume_prices, allowed_quantities) = (
    SELECT s.n, s.stock, CASE WHEN s.n > 1 THEN s.min_price ELSE l.price_cents END, l.sku,
           CASE WHEN s.n > 1 THEN NULL ELSE l.volume_prices END, CASE WHEN s.n > 1 THEN NULL ELSE l.allowed_quantities END
    FROM (SELECT count(*) AS n, coalesce(sum(stock_count), 0) AS stock, min(price_cents) AS min_price
          FROM product_variants WHERE product_id = ${productId} AND active = 1) s,
         (SELECT price_cents, sku, volume_prices, allowed_quantities FROM product_variants WHERE id = ${leadVariant(productId)}) l)
  WHERE id = ${productId} AND EXISTS (SELECT 1 FROM product_variants WHERE product_id = ${productId})`;

/** A new product's `Standard` variant, carrying what the product row (found by `created`) was made with. */
export const standardVariant = (created: SQL) => sql`
  INSERT INTO product_variants (product_id, name, sku, price_cents, volume_prices, allowed_quantities, stock_count, active, position, created_at, updated_at)
  SELECT id, ${STANDARD_VARIANT}, sku, price_cents, volume_prices, allowed_quantities, 0, 1, 0, created_at, updated_at FROM products WHERE ${created}`;

/**
 * The product's own sku, price, volume prices and pack sizes written onto its lead variant, once the product's
 * UPDATE (found by `updated`) applied: for a product with one active variant they are that variant's.
 */
export const copyToLeadVariant = (productId: number, updated: SQL) => sql`
  UPDATE product_variants SET (sku, price_cents, volume_prices, allowed_quantities, updated_at) =
    (SELECT sku, price_cents, volume_prices, allowed_quantities, updated_at FROM products WHERE id = ${productId})
  WHERE id = ${leadVariant(productId)} AND EXISTS (SELECT 1 FROM products WHERE ${updated})`;

/** The product's variants, by position (the admin's view). */
export const variantsQuery = (productId: number): Query<VariantRow[]> => ({
  reads: [sql`SELECT ${columnsOf(productVariants)} FROM product_variants WHERE product_id = ${productId} ORDER BY position, id`],
  parse: ([rows]) => rowsOf<VariantRow>(rows),
});

/** One variant, or 404. */
export const variantQuery = (variantId: number): Query<VariantRow> => ({
  reads: [sql`SELECT ${columnsOf(productVariants)} FROM product_variants WHERE id = ${variantId}`],
  parse: ([rows]) => {
    const [variant] = rowsOf<VariantRow>(rows);
    if (!variant) throw notFound('Variant');
    return variant;
  },
});

const variantWhere = (condition: SQL) => sql`SELECT id, ${rowJson(productVariants)} AS snapshot FROM product_variants WHERE ${condition}`;

function variantAudit(actor: Actor, action: 'variant.created' | 'variant.updated', input: Partial<VariantInput>, written: SQL, now: string): SQL {
  const { priceCents, volumePrices, allowedQuantities, backorderLimit, ...rest } = input;
  const fields = {
    ...rest,
    price: priceCents === undefined ? undefined : centsToAmount(priceCents),
    volume_prices: volumePrices === undefined ? undefined : volumePricesOf(volumePricesText(volumePrices)),
    allowed_quantities: allowedQuantities,
    backorder_limit: backorderLimit,
  };
  return auditEntry(
    actor,
    { action, target: sql`'product:' || product_id`, details: sql`json_set(${jsonDetails(fields)}, '$.variant_id', id)`, from: sql`FROM product_variants WHERE ${written}` },
    now,
  );
}

/**
 * Add a variant to a product: one batch, the INSERT guarded by "the product exists and has fewer than 50 variants",
 * the product's columns brought in line, the audit entry and (with an Idempotency-Key) its record. The new row is
 * found by its sku and creation time, both known before the batch.
 */
export async function createVariant(d1: Db, actor: Actor, productId: number, input: VariantInput, { claim }: CatalogueChange): Promise<VariantRow> {
  const now = isoNow();
  const created = sql`sku = ${input.sku} AND created_at = ${now}`;
  const position = input.position ?? sql`(SELECT coalesce(max(position), -1) + 1 FROM product_variants WHERE product_id = ${productId})`;
  try {
    const { reads } = await writeAsActor(d1, actor, {
      writes: [
        sql`
          INSERT INTO product_variants (product_id, name, sku, price_cents, volume_prices, allowed_quantities, stock_count, active, position,
                                        backorders, backorder_limit, created_at, updated_at)
          SELECT id, ${input.name}, ${input.sku}, ${input.priceCents}, ${volumePricesText(input.volumePrices ?? null)},
                 ${packSizesText(input.allowedQuantities) ?? null}, 0, ${input.active === false ? 0 : 1}, ${position},
                 ${input.backorders ? 1 : 0}, ${input.backorderLimit ?? 100}, ${now}, ${now}
          FROM products WHERE id = ${productId} AND (SELECT count(*) FROM product_variants WHERE product_id = ${productId}) < ${MAX_VARIANTS}`,
        sql`${syncProduct(productId)} AND EXISTS (SELECT 1 FROM product_variants WHERE ${created})`,
        ...(claim ? recordClaim(OPERATOR, claim, variantWhere(created)) : []),
        variantAudit(actor, 'variant.created', input, created, now),
      ],
      reads: [sql`SELECT ${columnsOf(productVariants)} FROM product_variants WHERE ${created}`, sql`SELECT 1 FROM products WHERE id = ${productId}`],
      committed: ([variant]) => rowsOf(variant).length > 0,
    });
    const [variant] = rowsOf<VariantRow>(reads[0]);
    if (variant) return variant;
    if (rowsOf(reads[1]).length === 0) throw notFound('Product');
    throw fieldError('name', `A product has at most ${MAX_VARIANTS} variants.`);
  } catch (err) {
    if (isUniqueViolation(err, 'product_variants.sku')) throw skuTaken();
    throw err;
  }
}

/** Every tier stays below the price after an update that sends one of the two (both: checked on arrival). */
function tiersBelowPrice(input: Partial<VariantInput>): SQL {
  if (input.priceCents === undefined && input.volumePrices === undefined) return sql`1`;
  const price = input.priceCents === undefined ? sql`price_cents` : sql`${input.priceCents}`;
  const tiers = input.volumePrices === undefined ? sql`volume_prices` : sql`${volumePricesText(input.volumePrices)}`;
  return sql`(${tiers} IS NULL OR json_extract(${tiers}, '$[0].price_cents') < ${price})`;
}

/**
 * The catalogue events of a variant's change, written before it: a price change of a variant that stays active
 * (`product.price_changed`, the product's "from" price as it will be) and a deactivation (`product.unavailable`),
 * each naming the variant.
 */
function variantChangeEvents(variantId: number, input: Partial<VariantInput>, now: string, origin: string) {
  const variant = (column: string) => sql`(SELECT ${sql.raw(column)} FROM product_variants WHERE id = ${variantId})`;
  const productId = variant('product_id');
  const staysActive = input.active === undefined ? sql`${variant('active')} = 1` : sql`${input.active ? 1 : 0} = 1`;
  const applies = sql`(SELECT 1 FROM product_variants WHERE id = ${variantId} AND ${tiersBelowPrice(input)}) = 1`;
  const writes: SQL[] = [];
  const reads: SQL[] = [];
  const tiersAfter = input.volumePrices === undefined ? undefined : volumePricesText(input.volumePrices);
  if (input.priceCents !== undefined || tiersAfter !== undefined) {
    const priceAfter = input.priceCents === undefined ? variant('price_cents') : sql`${input.priceCents}`;
    const differs = sql`(${input.priceCents === undefined ? sql`0` : sql`${variant('price_cents')} <> ${input.priceCents}`}
      OR ${tiersAfter === undefined ? sql`0` : sql`${variant('volume_prices')} IS NOT ${tiersAfter}`})`;
    const others = sql`(SELECT min(price_cents) FROM product_variants WHERE product_id = p.id AND active = 1 AND id <> ${variantId})`;
    const event = newCatalogueEvent('product.price_changed', now, origin);
    writes.push(
      recordCatalogueEvent(
        event,
        productId,
        sql`${differs} AND ${staysActive} AND p.active = 1 AND ${applies}`,
        {
          ...currentColumns,
          priceCents: sql`min(${priceAfter}, coalesce(${others}, ${priceAfter}))`,
          variantAfter: { variantId: sql`${variantId}`, priceCents: priceAfter, volumePrices: tiersAfter === undefined ? undefined : sql`${tiersAfter}` },
        },
        sql`p.price_cents`,
        sql`${variantId}`,
      ),
    );
    reads.push(catalogueEventIds(event));
  }
  if (input.active === false) {
    const event = newCatalogueEvent('product.unavailable', now, origin);
    const columns = { ...currentColumns, variantAfter: { variantId: sql`${variantId}`, active: sql`0` } };
    writes.push(recordCatalogueEvent(event, productId, sql`${variant('active')} = 1 AND p.active = 1 AND ${applies}`, columns, undefined, sql`${variantId}`));
    reads.push(catalogueEventIds(event));
  }
  return { writes, reads };
}

/** Change a variant: one batch, its events, the guarded UPDATE, the product's columns, the audit entry, the record. */
export async function updateVariant(d1: Db, actor: Actor, variantId: number, input: Partial<VariantInput>, { origin, claim, publish }: CatalogueChange): Promise<VariantRow> {
  const now = isoNow();
  const updated = sql`id = ${variantId} AND updated_at = ${now}`;
  const events = variantChangeEvents(variantId, input, now, origin);
  const set: SQL[] = [sql`updated_at = ${now}`];
  const put = (column: string, value: unknown) => value !== undefined && set.push(sql`${sql.raw(column)} = ${value}`);
  put('name', input.name);
  put('sku', input.sku);
  put('price_cents', input.priceCents);
  put('volume_prices', input.volumePrices === undefined ? undefined : volumePricesText(input.volumePrices));
  put('allowed_quantities', packSizesText(input.allowedQuantities));
  put('backorders', input.backorders === undefined ? undefined : input.backorders ? 1 : 0);
  put('backorder_limit', input.backorderLimit);
  put('active', input.active === undefined ? undefined : input.active ? 1 : 0);
  put('position', input.position);
  try {
    const { reads } = await writeAsActor(d1, actor, {
      writes: [
        ...events.writes,
        sql`UPDATE product_variants SET ${sql.join(set, sql`, `)} WHERE id = ${variantId} AND ${tiersBelowPrice(input)}`,
        sql`${syncProduct(sql`(SELECT product_id FROM product_variants WHERE ${updated})`)}`,
        ...(claim ? recordClaim(OPERATOR, claim, variantWhere(updated)) : []),
        variantAudit(actor, 'variant.updated', input, updated, now),
      ],
      reads: [sql`SELECT ${columnsOf(productVariants)} FROM product_variants WHERE ${updated}`, sql`SELECT 1 FROM product_variants WHERE id = ${variantId}`, ...events.reads],
      committed: ([variant]) => rowsOf(variant).length > 0,
    });
    const [variant] = rowsOf<VariantRow>(reads[0]);
    if (!variant) {
      if (rowsOf(reads[1]).length === 0) throw notFound('Variant');
      throw input.volumePrices === undefined
        ? fieldError('price', 'price must be above every volume price of the variant')
        : fieldError('volume_prices', "each volume price must be below the variant's price");
    }
    publish?.(reads.slice(2).flatMap(eventIdsOf));
    return variant;
  } catch (err) {
    if (isUniqueViolation(err, 'product_variants.sku') || isUniqueViolation(err, 'products.sku')) throw skuTaken();
    throw err;
  }
}

/**
 * A purchase's stock decrement, in its batch once the order exists: the variant's (the trigger of migration 0031
 * moves its product's by the same amount, so the purchase costs no statement more than before variants).
 */
export const variantSold = (variantId: SQL, quantity: number, bought: SQL) =>
  sql`UPDATE product_variants SET stock_count = stock_count - ${quantity} WHERE id = ${variantId} AND ${bought}`;
