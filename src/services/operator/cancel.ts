import { sql } from 'drizzle-orm';
import { rowJson } from '../../db/batch';
import { amountJson } from '../../db/json';
import type { Db } from '../../db/client';
import { orders } from '../../db/schema';
import { auditEntry, operatorActor } from '../accounts/audit-log';
import type { Caller } from '../caller';
import { OPERATOR, recordClaim, type IdempotencyClaim } from '../idempotency';
import { cancelOrder, type CancelRules } from '../orders/orders';
import type { Publish } from '../events/log';

// An operator's "Cancel order" (the console): the buyer's own cancel (src/services/orders/orders.ts: the same guarded
// batch, refund, revoked items and order.cancelled event), acting for the order's buyer, with the operator's audit
// entry and key claim in that batch. The buyer's hold period and final-sale flag apply; the buyer's daily cancel cap
// does not (it limits buyers, not the shop).

/** The order's buyer, only while the session is a live operator's: for anyone else NULL, so nothing changes. */
const buyerForOperator = (session: Caller, orderId: number): Caller => ({
  userId: sql`(SELECT user_id FROM orders WHERE id = ${orderId}
               AND EXISTS (SELECT 1 FROM users WHERE id = ${session.userId} AND role = 'operator' AND disabled_at IS NULL))`,
  proof: session.proof,
});

export async function cancelOrderAsOperator(d1: Db, session: Caller, orderId: number, rules: CancelRules, claim?: IdempotencyClaim, publish?: Publish) {
  const actor = operatorActor(session);
  const caller = buyerForOperator(session, orderId);
  const result = await cancelOrder(d1, caller, orderId, { ...rules, maxCancelsPerDay: Number.MAX_SAFE_INTEGER }, undefined, publish, (refunded, now) => [
    auditEntry(
      actor,
      {
        action: 'order.cancelled',
        target: sql`'order:' || o.id`,
        details: sql`json_object('order_number', o.order_number, 'user_id', o.user_id, 'refunded', ${amountJson(sql`o.total_amount_cents`)})`,
        from: sql`FROM orders o WHERE o.id = ${orderId} AND ${refunded}`,
      },
      now,
    ),
    ...(claim ? recordClaim(OPERATOR, claim, sql`SELECT id, ${rowJson(orders)} AS snapshot FROM orders WHERE id = ${orderId} AND ${refunded}`) : []),
  ]);
  // The batch proved the session (its proof led it): the console's middleware needs no proof read of its own.
  session.proved = caller.proved;
  return result;
}
