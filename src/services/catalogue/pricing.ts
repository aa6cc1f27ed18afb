import { sql, type SQL } from 'drizzle-orm';
import { ApiError, fieldError, notFound } from '../../lib/errors';
import { amountJson } from '../../db/json';
import { centsToAmount, formatUsd } from '../../lib/money';

// The one home of the pricing SQL. A purchase's guarded INSERT and a quote read the same `pricedPurchase` row, so
// what a quote says is what a purchase at that moment charges, computed in integer cents by SQLite from the prices
// of that moment (in the purchase's own batch: no read before it).
//
//   unit      = the volume tier's price (largest min_quantity <= quantity) or the list price
//   unit      = round_half_up(unit x (100 - discount_percent) / 100)
//   subtotal  = unit x quantity
//   deduction = percent coupon: round_half_up(subtotal x percent_off / 100) (at most the subtotal, as percent_off <= 100);
//               amount coupon: min(amount_off, subtotal)
//   total     = subtotal - deduction, never negative; 0 is a free order (docs/prices.md)

/** One volume tier, as the service handles it; stored as JSON `{ min_quantity, price_cents }` in products.volume_prices. */
export interface VolumePrice {
  minQuantity: number;
  priceCents: number;
}

/** The column's text for tiers (null = none). */
export const volumePricesText = (tiers: VolumePrice[] | null) =>
  tiers === null ? null : JSON.stringify(tiers.map((t) => ({ min_quantity: t.minQuantity, price_cents: t.priceCents })));

/** The column's tiers in cents, lowest `min_quantity` first, or null. */
export const volumeTiersOf = (text: string | null): VolumePrice[] | null =>
  text === null ? null : (JSON.parse(text) as { min_quantity: number; price_cents: number }[]).map((t) => ({ minQuantity: t.min_quantity, priceCents: t.price_cents }));

/** The column's tiers as the API shows them (`price` in USD), or null. */
export const volumePricesOf = (text: string | null) =>
  volumeTiersOf(text)?.map((t) => ({ min_quantity: t.minQuantity, price: centsToAmount(t.priceCents) })) ?? null;

/** The same, rendered by SQLite for JSON built in SQL (public stock): byte for byte what `volumePricesOf` gives. */
export const volumePricesJson = (column: SQL) => sql`CASE WHEN ${column} IS NULL THEN NULL ELSE json((SELECT json_group_array(json_object(
  'min_quantity', json_extract(t.value, '$.min_quantity'), 'price', ${amountJson(sql`json_extract(t.value, '$.price_cents')`)}))
  FROM json_each(${column}) t)) END`;

export interface PricingRequest {
  /** The buyer's id (a caller's credential subquery). */
  userId: SQL;
  productId: number;
  /** The variant asked for; null: the product's one active variant (required when it has several). */
  variantId?: number | null;
  quantity: number;
  /** As the client sent it, any case; null = none. */
  coupon: string | null;
  now: string;
}

/** Why a coupon cannot be used, as `pricedPurchase` names it. */
export type CouponRefusal =
  | 'unknown'
  | 'inactive'
  | 'not_started'
  | 'expired'
  | 'used_up'
  | 'used_up_by_you'
  | 'other_products'
  | 'other_variants'
  | 'min_total';

/** The row of `pricedPurchase` (always one while the buyer exists; product columns are null for an unknown product). */
export interface PricedPurchase {
  user_id: number;
  balance_cents: number;
  product_id: number | null;
  product_name: string | null;
  active: number | null;
  /** The variant bought (null: unknown, another product's, or not named where the product has several). */
  variant_id: number | null;
  variant_name: string | null;
  variant_active: number | null;
  /** The variant_id the request named, or null. */
  requested_variant: number | null;
  /** The active variants' names, by position, when the request must name one ("1 month, 3 months"). */
  variant_choices: string | null;
  /** The variant's stock, pack sizes and prices from here on. */
  stock_count: number | null;
  allowed_quantities: string | null;
  cancellable: number | null;
  list_unit_price: number | null;
  unit_price: number | null;
  subtotal: number | null;
  deduction: number | null;
  total: number | null;
  coupon_code: string | null;
  coupon_refusal: CouponRefusal | null;
  min_total_cents: number | null;
}

const roundHalfUpPercent = (cents: SQL, percent: SQL) => sql`((${cents}) * (${percent}) + 50) / 100`;

/** The volume tier's unit price for `quantity`, or the list price below every tier (and never above it): the variant's. */
const tierPrice = (quantity: SQL) => sql`min(v.price_cents, coalesce((
  SELECT json_extract(t.value, '$.price_cents') FROM json_each(v.volume_prices) t
  WHERE json_extract(t.value, '$.min_quantity') <= ${quantity}
  ORDER BY json_extract(t.value, '$.min_quantity') DESC LIMIT 1), v.price_cents))`;

/**
 * The variant a purchase buys: the one named (if it is the product's), else the product's one active variant; none
 * when the product has several and the request named none.
 */
const variantOf = (variantId: number | null) => sql`v.product_id = p.id AND v.id = coalesce(${variantId},
  CASE WHEN p.active_variants = 1 THEN (SELECT id FROM product_variants WHERE product_id = p.id AND active = 1 LIMIT 1) END)`;

/** A SELECT of one `PricedPurchase` row: every number the purchase charges and every reason it may refuse. */
export function pricedPurchase({ userId, productId, variantId = null, quantity: count, coupon, now }: PricingRequest): SQL {
  // D1 binds a JS number as a REAL: cast, so every product and division below is integer arithmetic.
  const quantity = sql`CAST(${count} AS INTEGER)`;
  const redemptions = sql`(SELECT count(*) FROM coupon_redemptions r WHERE r.coupon_id = a.coupon_id`;
  // Each step is MATERIALIZED: computed once, then read as columns. Flattened, every use of `total` (the guard of the
  // purchase's INSERT names it five times) would expand into the deduction, the unit price and its tier subquery
  // again: with a coupon, a purchase cost 25 % more worker time in the bench (docs/prices.md, Speed).
  return sql`
    WITH a AS MATERIALIZED (
        SELECT u.id AS user_id, u.balance_cents, p.id AS product_id, p.name AS product_name, p.active, v.stock_count,
               v.id AS variant_id, v.name AS variant_name, v.active AS variant_active, ${variantId} AS requested_variant,
               CASE WHEN v.id IS NULL AND p.active_variants > 1 THEN (SELECT group_concat(name, ', ') FROM (
                 SELECT name FROM product_variants WHERE product_id = p.id AND active = 1 ORDER BY position, id)) END AS variant_choices,
               v.allowed_quantities, p.cancellable, v.price_cents AS list_unit_price,
               ${roundHalfUpPercent(tierPrice(quantity), sql`100 - u.discount_percent`)} AS unit_price,
               c.id AS coupon_id, c.code AS coupon_code, c.active AS coupon_active, c.starts_at, c.expires_at, c.max_redemptions,
               c.max_per_user, c.product_ids, c.variant_ids, c.min_total_cents, c.percent_off, c.amount_off_cents
        FROM users u
        LEFT JOIN products p ON p.id = ${productId}
        LEFT JOIN product_variants v ON ${variantOf(variantId)}
        LEFT JOIN coupons c ON c.code = upper(${coupon})
        WHERE u.id = ${userId}
      ),
      b AS MATERIALIZED (
      SELECT a.user_id, a.balance_cents, a.product_id, a.product_name, a.active, a.variant_id, a.variant_name, a.variant_active,
             a.requested_variant, a.variant_choices, a.stock_count, a.allowed_quantities,
             a.cancellable, a.list_unit_price, a.unit_price, a.unit_price * ${quantity} AS subtotal, a.coupon_code, a.min_total_cents,
             CASE WHEN a.coupon_id IS NULL THEN 0
                  WHEN a.percent_off IS NOT NULL THEN ${roundHalfUpPercent(sql`a.unit_price * ${quantity}`, sql`a.percent_off`)}
                  ELSE min(a.amount_off_cents, a.unit_price * ${quantity}) END AS deduction,
             CASE WHEN ${coupon} IS NULL THEN NULL
                  WHEN a.coupon_id IS NULL THEN 'unknown'
                  WHEN a.coupon_active <> 1 THEN 'inactive'
                  WHEN a.starts_at IS NOT NULL AND a.starts_at > ${now} THEN 'not_started'
                  WHEN a.expires_at IS NOT NULL AND a.expires_at <= ${now} THEN 'expired'
                  WHEN a.max_redemptions IS NOT NULL AND ${redemptions}) >= a.max_redemptions THEN 'used_up'
                  WHEN a.max_per_user IS NOT NULL AND ${redemptions} AND r.user_id = a.user_id) >= a.max_per_user THEN 'used_up_by_you'
                  WHEN a.product_ids IS NOT NULL AND a.product_id NOT IN (SELECT value FROM json_each(a.product_ids)) THEN 'other_products'
                  WHEN a.variant_ids IS NOT NULL AND a.variant_id NOT IN (SELECT value FROM json_each(a.variant_ids)) THEN 'other_variants'
                  WHEN a.min_total_cents IS NOT NULL AND a.min_total_cents > a.unit_price * ${quantity} THEN 'min_total'
             END AS coupon_refusal
      FROM a
    )
    SELECT b.*, b.subtotal - b.deduction AS total FROM b`;
}

/** One rule of a purchase: SQL true when it holds, and the error code that names it when it does not. */
export interface PurchaseGuard {
  code: string;
  allows: SQL;
}

/**
 * The rules every priced purchase (and quote) passes, over a `pricedPurchase` row aliased `q`, in the order a refusal
 * names them: the product exists, is active, the variant is the product's (or, unnamed, the product has one active
 * variant at most) and is active, the pack size is allowed, the stock covers the quantity, the coupon (if any) applies.
 */
export const sellableGuards = (quantity: number): PurchaseGuard[] => [
  { code: 'NOT_FOUND', allows: sql`q.product_id IS NOT NULL` },
  { code: 'PRODUCT_UNAVAILABLE', allows: sql`q.active = 1` },
  { code: 'VALIDATION_FAILED', allows: sql`(q.variant_id IS NOT NULL OR (q.requested_variant IS NULL AND q.variant_choices IS NULL))` },
  { code: 'PRODUCT_UNAVAILABLE', allows: sql`q.variant_active = 1` },
  { code: 'INVALID_PACK_SIZE', allows: sql`(q.allowed_quantities IS NULL OR ${quantity} IN (SELECT value FROM json_each(q.allowed_quantities)))` },
  { code: 'INSUFFICIENT_STOCK', allows: sql`q.stock_count >= ${quantity}` },
  { code: 'COUPON_INVALID', allows: sql`q.coupon_refusal IS NULL` },
];

/** All of `guards` (the condition of a guarded INSERT). */
export const allOf = (guards: PurchaseGuard[]) => sql.join(guards.map((g) => sql`(${g.allows})`), sql` AND `);

/** The code of the first of `guards` that fails (NULL when all hold), for a statement reading `q`. */
export const firstFailing = (guards: PurchaseGuard[]) =>
  sql`CASE ${sql.join(guards.map((g) => sql`WHEN coalesce((${g.allows}), 0) = 0 THEN ${g.code}`), sql` `)} END`;

/** The guard every priced purchase (and quote) passes (`sellableGuards`, all of them). */
export const sellable = (quantity: number) => allOf(sellableGuards(quantity));

const couponReasons: Record<Exclude<CouponRefusal, 'min_total'>, string> = {
  unknown: 'This coupon does not exist.',
  inactive: 'This coupon is not active.',
  not_started: 'This coupon cannot be used yet.',
  expired: 'This coupon has expired.',
  used_up: 'This coupon has been used up.',
  used_up_by_you: 'You have already used this coupon as many times as it allows.',
  other_products: 'This coupon does not apply to this product.',
  other_variants: 'This coupon does not apply to this variant.',
};

function couponInvalid(priced: PricedPurchase): ApiError {
  const refusal = priced.coupon_refusal as CouponRefusal;
  const reason =
    refusal === 'min_total'
      ? `This coupon needs a subtotal of at least ${formatUsd(priced.min_total_cents ?? 0)}.`
      : couponReasons[refusal];
  return new ApiError('COUPON_INVALID', reason, { coupon: [reason] });
}

/**
 * Why a priced purchase (or quote) was refused, from its `pricedPurchase` row read in the same transaction; null
 * when nothing but the balance or the expected total stands in the way. Product rules first, then the coupon.
 */
export function sellableRefusal(priced: PricedPurchase | undefined, quantity: number): ApiError | null {
  if (!priced || priced.product_id === null) return notFound('Product');
  if (priced.active !== 1) return new ApiError('PRODUCT_UNAVAILABLE', 'This product is not available for sale.');
  if (priced.variant_id === null && priced.requested_variant !== null) return fieldError('variant_id', 'variant_id is not a variant of this product.');
  if (priced.variant_id === null && priced.variant_choices !== null) return fieldError('variant_id', `Choose a variant: ${priced.variant_choices}`);
  if (priced.variant_active !== 1) return new ApiError('PRODUCT_UNAVAILABLE', 'This variant is not available for sale.');
  const allowed = priced.allowed_quantities === null ? null : (JSON.parse(priced.allowed_quantities) as number[]);
  if (allowed && !allowed.includes(quantity)) {
    return new ApiError('INVALID_PACK_SIZE', `This product is sold in packs of ${allowed.join(', ')}.`, {
      code: 'INVALID_PACK_SIZE',
      allowed_quantities: allowed,
    });
  }
  if ((priced.stock_count ?? 0) < quantity) {
    return new ApiError('INSUFFICIENT_STOCK', `Only ${priced.stock_count} item(s) in stock.`, {
      code: 'INSUFFICIENT_STOCK',
      requested: quantity,
      available: priced.stock_count,
    });
  }
  if (priced.coupon_refusal !== null) return couponInvalid(priced);
  return null;
}

/** The purchase's refusal beyond `sellableRefusal`: the price lock, then the balance. */
export function purchaseRefusal(priced: PricedPurchase | undefined, quantity: number, expectedTotalCents: number | null): ApiError {
  const refusal = sellableRefusal(priced, quantity);
  if (refusal || !priced) return refusal ?? notFound('Product');
  const total = priced.total ?? 0;
  if (expectedTotalCents !== null && expectedTotalCents !== total) {
    return new ApiError('PRICE_CHANGED', `The total is now ${formatUsd(total)}, not ${formatUsd(expectedTotalCents)}.`, {
      expected_total: centsToAmount(expectedTotalCents),
      total: centsToAmount(total),
    });
  }
  return new ApiError('INSUFFICIENT_BALANCE', 'Insufficient wallet balance.', {
    code: 'INSUFFICIENT_BALANCE',
    required: centsToAmount(total),
    balance: centsToAmount(priced.balance_cents),
  });
}

/** The purchase batch's statement that records the order's coupon redemption (none without a coupon). */
export const redeemCoupon = (orderNumber: string, now: string) => sql`
  INSERT INTO coupon_redemptions (coupon_id, user_id, order_id, created_at)
  SELECT c.id, o.user_id, o.id, ${now} FROM orders o JOIN coupons c ON c.code = o.coupon WHERE o.order_number = ${orderNumber}`;
