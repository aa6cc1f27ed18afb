import { sql } from 'drizzle-orm';
import { columnsOf, rowJson, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { orders, type OrderRow } from '../../db/schema';
import { fieldError, notFound } from '../../lib/errors';
import { centsToAmount } from '../../lib/money';
import { isoNow } from '../../lib/time';
import { actorMayChange, auditEntry, writeAsActor, type Actor } from '../accounts/audit-log';
import { OPERATOR, recordClaim, type IdempotencyClaim } from '../idempotency';
import { newOperationId, walletMovement } from '../ledger';
import { creditNoteStatements } from '../documents/issue';
import { reversalStatements } from '../referrals/earnings';
import { eventIdsOf, inOutbox, newEvent, recordOccurrenceEvent, type Publish } from '../events/log';
import { orderRefundedEmail } from '../mail/notices';
import type { Mail } from '../mail/settings';

// Refunds by the operator: part or all of any order that is not cancelled (pending or completed, final sale too),
// never more than what is left of it. One batch: the `refund` ledger row tied to the order is written only while the
// amount fits in `total_amount - refunded_amount` (read inside the batch, so racing refunds are serialized by its
// transaction), the wallet is credited by exactly that row, and the order's `refunded_amount` grows by it (its CHECK,
// refunded <= total, is the backstop). The items stay the buyer's; a later cancellation refunds only the rest. The
// buyer is told: the event `order.refunded` (the order as refunded, with this refund's amount and reason; keyed on
// the refund's ledger row, since an order may be refunded several times) and the `order_refunded` email.

export interface OrderRefund {
  order: OrderRow;
  refundedCents: number;
}

export async function refundOrder(
  d1: Db,
  actor: Actor,
  orderId: number,
  amountCents: number,
  reason: string,
  claim?: IdempotencyClaim,
  told: { mail?: Mail; publish?: Publish } = {},
): Promise<OrderRefund> {
  const now = isoNow();
  const operationId = newOperationId();
  const refunded = sql`EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${operationId})`;
  // An operator refunds any order; a test key (playing the operator in its sandbox) only its own.
  const allowed = actorMayChange(actor, sql`(SELECT user_id FROM orders WHERE id = ${orderId})`);
  const thisRefund = sql`FROM wallet_transactions t JOIN orders o ON o.id = t.order_id WHERE t.operation_id = ${operationId}`;
  const event = newEvent('order.refunded', now);
  const email = orderRefundedEmail(told.mail, operationId, reason, now);
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      ...walletMovement({
        userId: sql`(SELECT user_id FROM orders WHERE id = ${orderId})`,
        type: 'refund',
        operationId,
        now,
        source: sql`
          SELECT ${amountCents} AS amount, 'Refund for order ' || o.order_number || ': ' || ${reason} AS description, o.id AS order_id, NULL AS deposit_id
          FROM orders o
          WHERE o.id = ${orderId} AND o.status <> 'cancelled' AND ${amountCents} > 0 AND ${allowed}
            AND o.total_amount_cents - o.refunded_amount_cents >= ${amountCents}`,
      }),
      sql`UPDATE orders SET refunded_amount_cents = refunded_amount_cents + (SELECT amount_cents FROM wallet_transactions WHERE operation_id = ${operationId}),
                            updated_at = ${now}
          WHERE id = ${orderId} AND ${refunded}`,
      ...creditNoteStatements(operationId, now),
      ...reversalStatements(orderId, operationId, now),
      // With an Idempotency-Key: the answer's snapshot, the order as refunded and this refund's amount.
      ...(claim
        ? recordClaim(
            OPERATOR,
            claim,
            sql`SELECT o.id, json_set(${rowJson(orders, 'o')}, '$.refundCents', t.amount_cents) AS snapshot
                FROM orders o JOIN wallet_transactions t ON t.order_id = o.id WHERE t.operation_id = ${operationId}`,
          )
        : []),
      auditEntry(
        actor,
        {
          action: 'order.refunded',
          target: sql`'order:' || t.order_id`,
          details: sql`json_object('amount_cents', t.amount_cents, 'reason', ${reason}, 'refunded_amount_cents', o.refunded_amount_cents)`,
          from: sql`FROM wallet_transactions t JOIN orders o ON o.id = t.order_id WHERE t.operation_id = ${operationId}`,
        },
        now,
      ),
      recordOccurrenceEvent(event, {
        from: thisRefund,
        objectId: sql`t.id`,
        userId: sql`o.user_id`,
        snapshot: sql`json_set(${rowJson(orders, 'o')}, '$.refundCents', t.amount_cents, '$.refundReason', ${reason})`,
      }),
      ...email.writes,
    ],
    reads: [
      sql`SELECT ${columnsOf(orders)} FROM orders WHERE id = ${orderId} AND ${allowed}`,
      sql`SELECT amount_cents AS amountCents FROM wallet_transactions WHERE operation_id = ${operationId}`,
      inOutbox(event),
      ...email.reads,
    ],
    committed: ([, refund]) => rowsOf(refund).length > 0,
  });
  const [order] = rowsOf<OrderRow>(reads[0]);
  if (!order) throw notFound('Order');
  const [refund] = rowsOf<{ amountCents: number }>(reads[1]);
  if (refund) {
    told.publish?.(eventIdsOf(reads[2]));
    email.sent(reads[3]);
    return { order, refundedCents: refund.amountCents };
  }
  if (order.status === 'cancelled') throw fieldError('amount', `Order ${order.orderNumber} is cancelled: it was refunded in full.`);
  const left = order.totalAmountCents - order.refundedAmountCents;
  throw fieldError('amount', `amount may not be more than what is left to refund of order ${order.orderNumber}: ${centsToAmount(left).toFixed(2)} USD.`);
}
