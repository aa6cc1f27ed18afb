import { and, asc, count, desc, eq, sql } from 'drizzle-orm';
import { columnsOf, changesOf, rowsOf, runBatch } from '../db/batch';
import { getDb, type Db } from '../db/client';
import { orders, stockItems, type OrderRow } from '../db/schema';
import { randomBase62 } from '../lib/crypto';
import { ApiError, notFound } from '../lib/errors';
import { centsToAmount } from '../lib/money';
import { pageWindow, type Page } from '../lib/pagination';
import { addMinutes, isoNow } from '../lib/time';
import { recordClaim, type IdempotencyClaim } from './idempotency';
import { newOperationId, walletMovement } from './ledger';

export interface OrderWithItems {
  order: OrderRow;
  stockItems: string[];
}

const newOrderNumber = (now: string) => `ORD-${now.slice(0, 10).replaceAll('-', '')}-${randomBase62(10).toUpperCase()}`;

// A batch that created nothing is retried when a re-read shows nothing wrong: state moved between the two reads.
const PURCHASE_ATTEMPTS = 3;

/**
 * Buy `quantity` items of a product: one D1 batch that creates the order only if the product is active, the pack size
 * is allowed, enough stock is available and the balance covers it; every later statement is keyed on the order number
 * generated here, so the debit, the claimed items, the ledger row and the stock_count decrement all happen or none do.
 */
export async function purchase(d1: Db, userId: number, productId: number, quantity: number, claim?: IdempotencyClaim): Promise<OrderWithItems> {
  for (let attempt = 1; ; attempt++) {
    const result = await tryPurchase(d1, userId, productId, quantity, claim);
    if (result) return result;
    await explainFailedPurchase(d1, userId, productId, quantity);
    if (attempt >= PURCHASE_ATTEMPTS) throw new ApiError('INSUFFICIENT_STOCK', 'The product is in high demand; please retry.', { code: 'INSUFFICIENT_STOCK', requested: quantity, available: 0 });
  }
}

async function tryPurchase(d1: Db, userId: number, productId: number, quantity: number, claim?: IdempotencyClaim): Promise<OrderWithItems | null> {
  const now = isoNow();
  const orderNumber = newOrderNumber(now);
  const orderExists = sql`EXISTS (SELECT 1 FROM orders WHERE order_number = ${orderNumber})`;
  const orderId = sql`(SELECT id FROM orders WHERE order_number = ${orderNumber})`;

  const results = await runBatch(d1, [
    sql`
      INSERT INTO orders (order_number, user_id, product_id, product_name, quantity, unit_price_cents, total_amount_cents, status, created_at, updated_at, cancellable)
      SELECT ${orderNumber}, u.id, p.id, p.name, ${quantity}, p.price_cents, p.price_cents * ${quantity}, 'pending', ${now}, ${now}, p.cancellable
      FROM products p JOIN users u ON u.id = ${userId}
      WHERE p.id = ${productId} AND p.active = 1 AND p.stock_count >= ${quantity}
        AND u.balance_cents >= p.price_cents * ${quantity}
        AND (p.allowed_quantities IS NULL OR ${quantity} IN (SELECT value FROM json_each(p.allowed_quantities)))`,
    ...walletMovement({
      userId,
      type: 'purchase',
      operationId: newOperationId(),
      now,
      source: sql`
        SELECT -o.total_amount_cents AS amount, 'Purchase ' || o.order_number || ': ' || o.quantity || ' x ' || o.product_name AS description,
               o.id AS order_id, NULL AS deposit_id
        FROM orders o WHERE o.order_number = ${orderNumber}`,
    }),
    sql`
      UPDATE stock_items SET status = 'sold', order_id = ${orderId}
      WHERE id IN (SELECT id FROM stock_items WHERE product_id = ${productId} AND status = 'available' ORDER BY id LIMIT ${quantity})
        AND ${orderExists}`,
    sql`UPDATE products SET stock_count = stock_count - ${quantity} WHERE id = ${productId} AND ${orderExists}`,
    // Backstop: quantity is re-derived from the items actually claimed; a short claim violates the orders CHECK and
    // rolls the whole batch back.
    sql`UPDATE orders SET quantity = (SELECT count(*) FROM stock_items WHERE order_id = orders.id) WHERE order_number = ${orderNumber}`,
    sql`SELECT ${columnsOf(orders)} FROM orders WHERE order_number = ${orderNumber}`,
    sql`SELECT content FROM stock_items WHERE order_id = ${orderId} ORDER BY id`,
    ...(claim ? recordClaim(claim, sql`SELECT id FROM orders WHERE order_number = ${orderNumber}`) : []),
  ]);
  const [order] = rowsOf<OrderRow>(results[6]);
  if (changesOf(results[0]) === 0 || !order) return null;
  return { order, stockItems: rowsOf<{ content: string }>(results[7]).map((i) => i.content) };
}

/** One read after a purchase batch that created nothing, to say why. Returns when nothing explains it. */
async function explainFailedPurchase(d1: Db, userId: number, productId: number, quantity: number): Promise<void> {
  const row = await d1
    .prepare(
      `SELECT p.id AS product_id, p.active, p.stock_count, p.price_cents, p.allowed_quantities, u.balance_cents
       FROM users u LEFT JOIN products p ON p.id = ? WHERE u.id = ?`,
    )
    .bind(productId, userId)
    .first<{
      product_id: number | null;
      active: number;
      stock_count: number;
      price_cents: number;
      allowed_quantities: string | null;
      balance_cents: number;
    }>();
  if (!row || row.product_id === null) throw notFound('Product');
  if (row.active !== 1) throw new ApiError('PRODUCT_UNAVAILABLE', 'This product is not available for sale.');
  const allowed = row.allowed_quantities === null ? null : (JSON.parse(row.allowed_quantities) as number[]);
  if (allowed && !allowed.includes(quantity)) {
    throw new ApiError('INVALID_PACK_SIZE', `This product is sold in packs of ${allowed.join(', ')}.`, {
      code: 'INVALID_PACK_SIZE',
      allowed_quantities: allowed,
    });
  }
  if (row.stock_count < quantity) {
    throw new ApiError('INSUFFICIENT_STOCK', `Only ${row.stock_count} item(s) in stock.`, {
      code: 'INSUFFICIENT_STOCK',
      requested: quantity,
      available: row.stock_count,
    });
  }
  const requiredCents = row.price_cents * quantity;
  if (row.balance_cents < requiredCents) {
    throw new ApiError('INSUFFICIENT_BALANCE', 'Insufficient wallet balance.', {
      code: 'INSUFFICIENT_BALANCE',
      required: centsToAmount(requiredCents),
      balance: centsToAmount(row.balance_cents),
    });
  }
}

/** What decides whether a buyer may cancel: the hold period and the cap on cancellations (src/env.ts Config). */
export interface CancelRules {
  orderHoldHours: number;
  maxCancelsPerDay: number;
}

/**
 * Cancel a pending order: one batch guarded by `status = 'pending'`, the order's final-sale flag, its hold period and
 * the buyer's cancellations of the last 24 hours (counted inside the batch, so racing cancels cannot pass the cap).
 * It cancels the order, writes the refund ledger row (at most one per order), credits the wallet and revokes the
 * delivered items (they were disclosed: never resold; the operator deactivates them at the vendor).
 */
export async function cancelOrder(
  d1: Db,
  userId: number,
  orderId: number,
  rules: CancelRules,
  claim?: IdempotencyClaim,
): Promise<{ order: OrderRow; refundedCents: number }> {
  const now = isoNow();
  const operationId = newOperationId();
  const holdStart = addMinutes(now, -60 * rules.orderHoldHours);
  // ORDER_HOLD_HOURS=0 means "the next job run completes it": until then the order stays cancellable.
  const withinHold = rules.orderHoldHours > 0 ? sql`AND created_at > ${holdStart}` : sql``;
  const recentCancels = sql`(SELECT count(*) FROM wallet_transactions
    WHERE user_id = ${userId} AND type = 'refund' AND created_at > ${addMinutes(now, -24 * 60)})`;
  const results = await runBatch(d1, [
    sql`UPDATE orders SET status = 'cancelled', updated_at = ${now}
        WHERE id = ${orderId} AND user_id = ${userId} AND status = 'pending' AND cancellable = 1 ${withinHold}
          AND ${recentCancels} < ${rules.maxCancelsPerDay}`,
    ...walletMovement({
      userId,
      type: 'refund',
      operationId,
      now,
      source: sql`
        SELECT o.total_amount_cents AS amount, 'Refund for order ' || o.order_number AS description, o.id AS order_id, NULL AS deposit_id
        FROM orders o
        WHERE o.id = ${orderId} AND o.user_id = ${userId} AND o.status = 'cancelled'
          AND NOT EXISTS (SELECT 1 FROM wallet_transactions t WHERE t.order_id = o.id AND t.type = 'refund')`,
    }),
    sql`
      UPDATE stock_items SET status = 'revoked', revoked_at = ${now}
      WHERE order_id = ${orderId} AND status = 'sold' AND EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${operationId})`,
    // Read in the same transaction as the guarded UPDATE, so it tells why that changed nothing.
    sql`SELECT ${columnsOf(orders)}, ${recentCancels} AS recentCancels FROM orders WHERE id = ${orderId} AND user_id = ${userId}`,
    ...(claim
      ? recordClaim(claim, sql`SELECT ${orderId} AS id WHERE EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${operationId})`)
      : []),
  ]);
  const [order] = rowsOf<OrderRow & { recentCancels: number }>(results[4]);
  if (!order) throw notFound('Order');
  if (changesOf(results[0]) === 0) throw whyNotCancelled(order, rules, order.createdAt <= holdStart);
  return { order, refundedCents: order.totalAmountCents };
}

/** An order that is not cancellable anyway answers ORDER_NOT_CANCELLABLE before the cap is mentioned. */
function whyNotCancelled(order: OrderRow & { recentCancels: number }, rules: CancelRules, holdOver: boolean): ApiError {
  const refuse = (why: string) => new ApiError('ORDER_NOT_CANCELLABLE', `Order ${order.orderNumber} ${why} and cannot be cancelled.`);
  if (order.status !== 'pending') return refuse(`is ${order.status}`);
  if (order.cancellable !== 1) return refuse('is final sale');
  if (rules.orderHoldHours > 0 && holdOver) return refuse(`is past its ${rules.orderHoldHours}-hour hold period`);
  return new ApiError(
    'CANCEL_LIMIT_REACHED',
    rules.maxCancelsPerDay === 0
      ? 'Orders cannot be cancelled in this shop.'
      : `You have cancelled ${order.recentCancels} order(s) in the last 24 hours; at most ${rules.maxCancelsPerDay} are allowed. Try again later.`,
  );
}

export async function listOrders(d1: Db, userId: number, page: Page) {
  const db = getDb(d1);
  const { limit, offset } = pageWindow(page);
  const [rows, [{ total }]] = await db.batch([
    db.select().from(orders).where(eq(orders.userId, userId)).orderBy(desc(orders.createdAt), desc(orders.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(orders).where(eq(orders.userId, userId)),
  ]);
  return { rows, total };
}

export async function getOrder(d1: Db, userId: number, orderId: number): Promise<OrderWithItems> {
  const db = getDb(d1);
  const [[order], items] = await db.batch([
    db.select().from(orders).where(and(eq(orders.id, orderId), eq(orders.userId, userId))),
    db
      .select({ content: stockItems.content })
      .from(stockItems)
      .where(sql`${stockItems.orderId} = ${orderId} AND EXISTS (SELECT 1 FROM orders WHERE id = ${orderId} AND user_id = ${userId})`)
      .orderBy(asc(stockItems.id)),
  ]);
  if (!order) throw notFound('Order');
  return { order, stockItems: items.map((i) => i.content) };
}

/** Scheduled job: pending orders older than the hold period complete (and can no longer be cancelled). */
export async function completeHeldOrders(d1: Db, now: string, holdHours: number, limit: number): Promise<number> {
  const cutoff = addMinutes(now, -60 * holdHours);
  const result = await getDb(d1).run(sql`
    UPDATE orders SET status = 'completed', updated_at = ${now}
    WHERE id IN (SELECT id FROM orders WHERE status = 'pending' AND created_at <= ${cutoff} ORDER BY created_at LIMIT ${limit})
      AND status = 'pending'`);
  return result.meta.changes;
}
