import { sql, type SQL } from 'drizzle-orm';

// What a referrer gives back, as statements for other domains' batches: two in every refund's (the same share of the
// refund is taken back). What an order earns is written by the statement that creates the order (the trigger
// orders_referral_earning of migrations/0033_referrals.sql), so the purchase's batch spends no statement on it. All
// arithmetic in integer cents: round_half_down(x / d) is (2x + d - 1) / (2d) in SQLite's integer division, x >= 0, d > 0.

const roundHalfDown = (numerator: SQL, denominator: SQL) => sql`((2 * ${numerator} + ${denominator} - 1) / (2 * ${denominator}))`;

/**
 * The two statements of a refund's batch, after the statement that raised the order's `refunded_amount` by the
 * refund (the ledger row `operationId`): the refund takes back round_half_down(earned × refunded / total) of the
 * order's earning, never more than is left, and all that is left when the order is now refunded in full.
 * - An earning not moved yet loses that share in place; a full refund makes it `reversed` (amount 0).
 * - An earning already moved into the wallet keeps its status; an `offset` row of minus that share is written,
 *   available at once, so the next transfer nets it out (the earnings balance may go below zero).
 * Nothing happens when the batch refunded nothing (its ledger row is missing) or the order earned nothing.
 */
export function reversalStatements(orderId: SQL | number, operationId: string, now: string): [SQL, SQL] {
  const refunded = sql`(SELECT amount_cents FROM wallet_transactions WHERE operation_id = ${operationId})`;
  const share = (earning: string, left: SQL) => sql`
    CASE WHEN o.refunded_amount_cents >= o.total_amount_cents THEN ${left}
         ELSE min(${left}, ${roundHalfDown(sql`${sql.raw(earning)}.earned_cents * ${refunded}`, sql`o.total_amount_cents`)}) END`;
  const leftAfterTransfer = sql`(e.amount_cents + (SELECT coalesce(sum(f.amount_cents), 0) FROM referral_earnings f WHERE f.order_id = e.order_id AND f.kind = 'offset'))`;
  return [
    sql`
      UPDATE referral_earnings
      SET amount_cents = amount_cents - (SELECT ${share('referral_earnings', sql`referral_earnings.amount_cents`)} FROM orders o WHERE o.id = referral_earnings.order_id),
          status = CASE WHEN (SELECT o.refunded_amount_cents >= o.total_amount_cents FROM orders o WHERE o.id = referral_earnings.order_id) THEN 'reversed' ELSE status END,
          updated_at = ${now}
      WHERE order_id = ${orderId} AND kind = 'earning' AND status = 'pending' AND ${refunded} IS NOT NULL`,
    sql`
      INSERT INTO referral_earnings (referrer_id, order_id, kind, earned_cents, amount_cents, status, available_at, created_at, updated_at)
      SELECT x.referrer_id, x.order_id, 'offset', -x.share, -x.share, 'pending', ${now}, ${now}, ${now}
      FROM (
        SELECT e.referrer_id, e.order_id, ${share('e', leftAfterTransfer)} AS share
        FROM referral_earnings e JOIN orders o ON o.id = e.order_id
        WHERE e.order_id = ${orderId} AND e.kind = 'earning' AND e.status = 'transferred' AND ${refunded} IS NOT NULL
      ) x
      WHERE x.share > 0`,
  ];
}
