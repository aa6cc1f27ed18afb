import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowJson, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { orders, type ClaimRow, type OrderRow } from '../../db/schema';
import { randomBase62 } from '../../lib/crypto';
import { ApiError, notFound } from '../../lib/errors';
import { pageWindow, type Page } from '../../lib/pagination';
import { addMinutes, isoNow } from '../../lib/time';
import { readAs, writeAs, type Caller } from '../caller';
import { catalogueEventIds, newCatalogueEvent, recordCatalogueEvent, type CatalogueChange } from '../catalogue/events';
import { changeRowsWithEvents, eventIdsOf, inOutbox, newEvent, recordEvent, type Publish } from '../events/log';
import { recordClaim, type IdempotencyClaim } from '../idempotency';
import { newOperationId, walletMovement } from '../ledger';
import { receiptEmail } from '../mail/notices';
import { verificationGate } from '../accounts/email-verification';
import { accountGate } from '../accounts/holds';
import { orderClaims } from './claims';
import { lowStockAlert } from '../mail/alerts';
import type { Mail } from '../mail/settings';
import { variantSold } from '../catalogue/variants';
import { allOf, firstFailing, pricedPurchase, purchaseRefusal, redeemCoupon, sellableGuards, type PricedPurchase, type PurchaseGuard } from '../catalogue/pricing';
import { overSpendLimit, spendLimitState, withinSpendLimit } from '../accounts/spend-limits';
import { creditNoteStatements, invoiceIssue, issueDocuments, type DocumentIssue } from '../documents/issue';
import { orderDocumentsQuery, type DocumentWithCorrects } from '../documents/documents';
import { reversalStatements } from '../referrals/earnings';
import { keptTotal } from '../accounts/counts';

export interface OrderWithItems {
  order: OrderRow;
  stockItems: string[];
  /** The order's warranty claims and its warranty in hours (the product's when it was bought; read by getOrder). */
  claims?: ClaimRow[];
  warrantyHours?: number;
  /** The order's invoice and credit notes (read by getOrder when asked: the dashboard's order page). */
  documents?: DocumentWithCorrects[];
}

const newOrderNumber = (now: string) => `ORD-${now.slice(0, 10).replaceAll('-', '')}-${randomBase62(10).toUpperCase()}`;

const orderByNumber = (orderNumber: string) => sql`SELECT ${columnsOf(orders)} FROM orders WHERE order_number = ${orderNumber}`;
// A replaced item leaves its order's list; its replacement takes its place (its slot), so indexes never move.
const itemsOf = (orderId: SQL | number) =>
  sql`SELECT content FROM stock_items WHERE order_id = ${orderId} AND replaced_by IS NULL ORDER BY coalesce(slot, id)`;
const contentsOf = (result: D1Result | undefined) => rowsOf<{ content: string }>(result).map((i) => i.content);

/** What a buyer asks to buy: the product, the quantity, a coupon code and the total they saw (price lock). */
export interface PurchaseRequest {
  productId: number;
  /** Required when the product has several active variants (src/services/catalogue/pricing.ts). */
  variantId?: number | null;
  quantity: number;
  coupon?: string | null;
  /** When set, the purchase happens only at exactly this total (cents), else 409 PRICE_CHANGED. */
  expectedTotalCents?: number | null;
}

/** What the purchase's statements need beyond the request: catalogue events' origin, a key claim, mail. */
export interface PurchaseOptions extends CatalogueChange {
  mail?: Mail;
  now?: string;
  /** More rules for the order's INSERT (the credit of a deposit: "this batch credited it", the items are there). */
  alsoRequire?: PurchaseGuard[];
  /** Rules named before every other when they fail (a deposit's order: its key still live, paid before expiry). */
  requireFirst?: PurchaseGuard[];
  /** The buyer's request's Cloudflare country for the invoice's evidence (default: the caller's place). */
  ipCountry?: SQL;
  /** Documents of other types issued by the same two statements as the order's invoice (a credit's receipt). */
  alsoIssue?: DocumentIssue[];
}

/** What the purchase's batch did, from its reads: the order bought, or the refusal that explains why not. */
export type PurchaseOutcome = { bought: OrderWithItems; refusal?: undefined } | { bought?: undefined; refusal: ApiError };

/** The statements of one purchase, for a batch of their own (`purchase`) or inside another (a deposit's credit). */
export interface PurchaseStatements {
  orderNumber: string;
  writes: SQL[];
  reads: SQL[];
  /** After `writes`: the order's event, key claim, receipt and stock alert (a credit puts its own event before them). */
  announce: SQL[];
  /** SQL true once the order exists (this batch bought it). */
  bought: SQL;
  /** SQL: NULL when the order exists, else the error code of the first rule that refused it (order of `outcome`). */
  refusalCode: SQL;
  /** After the commit, given the results of `reads`: publishes the events and sends the receipt of an order bought. */
  outcome: (results: D1Result[]) => PurchaseOutcome;
  /**
   * The two reads a batch that does not answer with the order needs (a credit's): the order's events to publish and
   * its receipt to send, handed to `announced` after the commit.
   */
  announceReads: SQL[];
  announced: (results: D1Result[]) => void;
}

/**
 * The one builder of a purchase's statements, used by `POST /orders` (and the dashboard's Buy) and by the credit of a
 * deposit that pays for an order. The order row is created only if every rule holds (the email gate, the product is
 * active, the pack size is allowed, enough stock is available, the coupon applies, the total is the one expected, the
 * key's spend limit, the balance covers it), all priced in SQL from the prices of that moment
 * (src/services/catalogue/pricing.ts); every later statement is keyed on the order number generated here, so the debit, the
 * claimed items, the ledger row, the coupon's redemption and the stock_count decrement all happen or none do. The reads
 * show the order and its items, or, when nothing was created, the priced state that says why.
 */
export function purchaseStatements(caller: Caller, request: PurchaseRequest, options: PurchaseOptions): PurchaseStatements {
  const { productId, quantity } = request;
  const { origin, claim, publish, mail } = options;
  const expectedTotal = request.expectedTotalCents ?? null;
  const now = options.now ?? isoNow();
  const orderNumber = newOrderNumber(now);
  const receipt = receiptEmail(mail, orderNumber, now);
  const gate = verificationGate(mail, caller.userId);
  // The blocklist and holds ride in the order's own INSERT, so every path that buys with these statements inherits them.
  const account = accountGate(caller);
  const event = newEvent('order.created', now);
  const orderExists = sql`EXISTS (SELECT 1 FROM orders WHERE order_number = ${orderNumber})`;
  const orderId = sql`(SELECT id FROM orders WHERE order_number = ${orderNumber})`;
  const orderVariant = sql`(SELECT variant_id FROM orders WHERE order_number = ${orderNumber})`;
  const priced = pricedPurchase({ userId: caller.userId, productId, variantId: request.variantId ?? null, quantity, coupon: request.coupon ?? null, now });
  // In the order a refusal names them (`outcome` below says the same in words).
  const guards: PurchaseGuard[] = [
    ...(options.requireFirst ?? []),
    ...account.guards,
    { code: 'EMAIL_NOT_VERIFIED', allows: gate.allows },
    ...sellableGuards(quantity),
    { code: 'PRICE_CHANGED', allows: sql`(${expectedTotal} IS NULL OR q.total = ${expectedTotal})` },
    { code: 'SPEND_LIMIT_REACHED', allows: withinSpendLimit(caller, sql`q.total`, now) },
    { code: 'INSUFFICIENT_BALANCE', allows: sql`q.balance_cents >= q.total` },
    ...(options.alsoRequire ?? []),
  ];

  const soldOut = newCatalogueEvent('product.unavailable', now, origin);
  const spendReads = spendLimitState(caller, now);
  const operationId = newOperationId();
  const writes = [
    sql`
      INSERT INTO orders (order_number, user_id, product_id, product_name, quantity, list_unit_price_cents, unit_price_cents,
                          discount_amount_cents, total_amount_cents, coupon, coupon_amount_cents, status, created_at, updated_at, cancellable, api_key_id,
                          variant_id, variant_name, warranty_hours)
      SELECT ${orderNumber}, q.user_id, q.product_id, q.product_name, ${quantity}, q.list_unit_price, q.unit_price,
             q.list_unit_price * ${quantity} - q.total, q.total, q.coupon_code, q.deduction, 'pending', ${now}, ${now}, q.cancellable, ${caller.keyId ?? null},
             q.variant_id, q.variant_name, (SELECT p.warranty_hours FROM products p WHERE p.id = q.product_id)
      FROM (${priced}) q
      WHERE ${allOf(guards)}`,
    ...walletMovement({
      userId: caller.userId,
      type: 'purchase',
      operationId,
      now,
      source: sql`
        SELECT -o.total_amount_cents AS amount, 'Purchase ' || o.order_number || ': ' || o.quantity || ' x ' || o.product_name AS description,
               o.id AS order_id, NULL AS deposit_id
        FROM orders o WHERE o.order_number = ${orderNumber}`,
    }),
    sql`
      UPDATE stock_items SET status = 'sold', order_id = ${orderId}
      WHERE id IN (SELECT id FROM stock_items WHERE variant_id = ${orderVariant} AND status = 'available' ORDER BY id LIMIT ${quantity})
        AND ${orderExists}`,
    variantSold(orderVariant, quantity, orderExists),
    recordCatalogueEvent(soldOut, productId, sql`(SELECT stock_count FROM product_variants WHERE id = ${orderVariant}) = 0 AND ${orderExists}`, undefined, undefined, orderVariant),
    // Backstop: quantity is re-derived from the items actually claimed; a short claim violates the orders CHECK and
    // rolls the whole batch back.
    sql`UPDATE orders SET quantity = (SELECT count(*) FROM stock_items WHERE order_id = orders.id) WHERE order_number = ${orderNumber}`,
    redeemCoupon(orderNumber, now),
    ...issueDocuments([invoiceIssue(operationId, options.ipCountry ?? sql`${caller.place?.country ?? null}`), ...(options.alsoIssue ?? [])], now),
  ];
  const announce = [
    recordEvent(event, orders, sql`order_number = ${orderNumber}`),
    ...(claim ? recordClaim(caller, claim, sql`SELECT id, ${rowJson(orders)} AS snapshot FROM orders WHERE order_number = ${orderNumber}`) : []),
    ...receipt.writes,
    ...lowStockAlert(mail, productId, orderNumber, now),
  ];
  const reads = [orderByNumber(orderNumber), itemsOf(orderId), priced, inOutbox(event), catalogueEventIds(soldOut), ...spendReads, ...gate.reads, ...receipt.reads, ...account.reads];
  const outcome = (results: D1Result[]): PurchaseOutcome => {
    const [orderResult, itemsResult, stateResult, outboxResult, soldOutResult, ...tail] = results;
    const spendResults = tail.slice(0, spendReads.length);
    const emailResults = tail.slice(spendReads.length);
    const [order] = rowsOf<OrderRow>(orderResult);
    if (order) {
      publish?.([...eventIdsOf(outboxResult), ...eventIdsOf(soldOutResult)]);
      receipt.sent(emailResults[gate.reads.length]);
      return { bought: { order, stockItems: contentsOf(itemsResult) } };
    }
    try {
      account.check(tail.slice(tail.length - account.reads.length));
      gate.check(emailResults[0]);
    } catch (err) {
      if (err instanceof ApiError) return { refusal: err };
      throw err;
    }
    const state = rowsOf<PricedPurchase>(stateResult)[0];
    const refusal = purchaseRefusal(state, quantity, expectedTotal);
    // Everything else in order, the key's daily cap is said before the balance (topping up would not help).
    return { refusal: (refusal.code === 'INSUFFICIENT_BALANCE' && state && overSpendLimit(spendResults[0], state.total ?? 0)) || refusal };
  };
  return {
    orderNumber,
    writes,
    announce,
    reads,
    announceReads: [sql`${inOutbox(event)} UNION ALL ${catalogueEventIds(soldOut)}`, ...receipt.reads],
    announced: ([outbox, emails]) => {
      publish?.(eventIdsOf(outbox));
      receipt.sent(emails);
    },
    bought: orderExists,
    refusalCode: sql`CASE WHEN ${orderExists} THEN NULL ELSE coalesce((SELECT ${firstFailing(guards)} FROM (${priced}) q), 'NOT_FOUND') END`,
    outcome,
  };
}

/**
 * Buy `quantity` items of a product: the purchase's statements (`purchaseStatements`) as one D1 batch of their own,
 * the caller's proof first. Answers the order and its items, or throws the refusal its reads explain.
 */
export async function purchase(
  d1: Db,
  caller: Caller,
  request: PurchaseRequest,
  options: CatalogueChange & { mail?: Mail },
): Promise<OrderWithItems> {
  const statements = purchaseStatements(caller, request, options);
  const reads = await writeAs(d1, caller, {
    writes: [...statements.writes, ...statements.announce],
    reads: statements.reads,
    committed: ([order]) => rowsOf(order).length > 0,
  });
  const { bought, refusal } = statements.outcome(reads);
  if (refusal) throw refusal;
  return bought;
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
 * delivered items (they were disclosed: never resold; the operator deactivates them at the vendor). The refund's
 * operation id, generated here, says whether this very request cancelled the order.
 */
export async function cancelOrder(
  d1: Db,
  caller: Caller,
  orderId: number,
  rules: CancelRules,
  claim?: IdempotencyClaim,
  publish?: Publish,
  /** More writes for the cancel's batch (an operator's audit entry), given the condition "this batch refunded". */
  alsoWrite?: (refunded: SQL, now: string) => SQL[],
): Promise<{ order: OrderRow; refundedCents: number }> {
  const now = isoNow();
  const operationId = newOperationId();
  const event = newEvent('order.cancelled', now);
  const refunded = sql`EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${operationId})`;
  const holdStart = addMinutes(now, -60 * rules.orderHoldHours);
  // ORDER_HOLD_HOURS=0 means "the next job run completes it": until then the order stays cancellable.
  const withinHold = rules.orderHoldHours > 0 ? sql`AND created_at > ${holdStart}` : sql``;
  // Cancelled orders never change again, so updated_at is when each was cancelled (index orders_user_cancelled).
  const recentCancels = sql`(SELECT count(*) FROM orders
    WHERE user_id = ${caller.userId} AND status = 'cancelled' AND updated_at > ${addMinutes(now, -24 * 60)})`;
  const [orderResult, refundResult, outboxResult] = await writeAs(d1, caller, {
    writes: [
      // The refund of what is left of the order (all of it unless the operator or a claim refunded part before) is
      // written first, guarded by every rule; the order is cancelled only by the batch that wrote it.
      ...walletMovement({
        userId: caller.userId,
        type: 'refund',
        operationId,
        now,
        source: sql`
          SELECT o.total_amount_cents - o.refunded_amount_cents AS amount, 'Refund for order ' || o.order_number AS description,
                 o.id AS order_id, NULL AS deposit_id
          FROM orders o
          WHERE o.id = ${orderId} AND o.user_id = ${caller.userId} AND o.status = 'pending' AND o.cancellable = 1 ${withinHold}
            AND ${recentCancels} < ${rules.maxCancelsPerDay}`,
      }),
      sql`UPDATE orders SET status = 'cancelled', refunded_amount_cents = total_amount_cents, updated_at = ${now}
          WHERE id = ${orderId} AND ${refunded}`,
      ...reversalStatements(orderId, operationId, now),
      // Open claims of the order end with it: it is refunded in full.
      sql`UPDATE claims SET status = 'rejected', resolution = 'The order was cancelled and refunded.', resolved_at = ${now}
          WHERE order_id = ${orderId} AND status = 'open' AND ${refunded}`,
      sql`UPDATE stock_items SET status = 'revoked', revoked_at = ${now} WHERE order_id = ${orderId} AND status = 'sold' AND ${refunded}`,
      ...creditNoteStatements(operationId, now),
      recordEvent(event, orders, sql`id = ${orderId} AND ${refunded}`),
      ...(claim
        ? recordClaim(
            caller,
            claim,
            // The snapshot carries this cancel's own refund (the order may have been partly refunded before).
            sql`SELECT id, json_set(${rowJson(orders)}, '$.cancelRefundCents', (SELECT amount_cents FROM wallet_transactions WHERE operation_id = ${operationId})) AS snapshot
                FROM orders WHERE id = ${orderId} AND ${refunded}`,
          )
        : []),
      ...(alsoWrite?.(refunded, now) ?? []),
    ],
    reads: [
      // Read in the same transaction as the guarded UPDATE, so it tells why that changed nothing.
      sql`SELECT ${columnsOf(orders)}, ${recentCancels} AS recentCancels FROM orders WHERE id = ${orderId} AND user_id = ${caller.userId}`,
      sql`SELECT amount_cents AS amountCents FROM wallet_transactions WHERE operation_id = ${operationId}`,
      inOutbox(event),
    ],
    committed: ([, refund]) => rowsOf(refund).length > 0,
  });
  const [order] = rowsOf<OrderRow & { recentCancels: number }>(orderResult);
  if (!order) throw notFound('Order');
  if (rowsOf(refundResult).length === 0) throw whyNotCancelled(order, rules, order.createdAt <= holdStart);
  publish?.(eventIdsOf(outboxResult));
  return { order, refundedCents: rowsOf<{ amountCents: number }>(refundResult)[0].amountCents };
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

export async function listOrders(d1: Db, caller: Caller, page: Page) {
  const { limit, offset } = pageWindow(page);
  const [rows, total] = await readAs(d1, caller, [
    sql`SELECT ${columnsOf(orders)} FROM orders WHERE user_id = ${caller.userId} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    keptTotal(caller.userId, 'orders_count'),
  ]);
  return { rows: rowsOf<OrderRow>(rows), total: rowsOf<{ total: number }>(total)[0].total };
}

export async function getOrder(d1: Db, caller: Caller, orderId: number, { withDocuments = false } = {}): Promise<OrderWithItems> {
  const documents = withDocuments ? orderDocumentsQuery(caller, orderId) : null;
  const [orderResult, items, claimsResult, ...documentResults] = await readAs(d1, caller, [
    sql`SELECT ${columnsOf(orders)} FROM orders WHERE id = ${orderId} AND user_id = ${caller.userId}`,
    itemsOf(sql`(SELECT id FROM orders WHERE id = ${orderId} AND user_id = ${caller.userId})`),
    orderClaims(caller, orderId),
    ...(documents?.reads ?? []),
  ]);
  const [order] = rowsOf<OrderRow>(orderResult);
  if (!order) throw notFound('Order');
  return {
    order,
    stockItems: contentsOf(items),
    claims: rowsOf<ClaimRow>(claimsResult),
    warrantyHours: order.warrantyHours,
    ...(documents && { documents: documents.parse(documentResults) }),
  };
}

/** An order's items as a text file, one per line (the API's export, and the dashboard's). */
export const orderExportFile = ({ order, stockItems }: OrderWithItems) => ({
  text: stockItems.map((item) => `${item}\n`).join(''),
  headers: {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Disposition': `attachment; filename="${order.orderNumber}.txt"`,
  },
});

/** A purchase's first outcome, rendered again from its record: the order as it was, its items by reference. */
export const purchaseReplay = {
  related: (orderId: SQL) => [itemsOf(orderId)],
  load: (snapshot: unknown, [items]: D1Result[]): OrderWithItems => ({ order: snapshot as OrderRow, stockItems: contentsOf(items) }),
};

/**
 * Scheduled job: pending orders older than the hold period complete (and can no longer be cancelled), each with its
 * `order.completed` event, in one batch.
 */
export async function completeHeldOrders(d1: Db, now: string, holdHours: number, limit: number): Promise<number> {
  const cutoff = addMinutes(now, -60 * holdHours);
  return changeRowsWithEvents(d1, {
    type: 'order.completed',
    table: orders,
    candidates: sql`SELECT * FROM orders WHERE status = 'pending' AND created_at <= ${cutoff} ORDER BY created_at LIMIT ${limit}`,
    set: { status: 'completed', updatedAt: now },
    limit,
    now,
  });
}
