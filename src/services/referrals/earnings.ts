import { sql, type SQL } from 'drizzle-orm';

// What a referrer earns and gives back, as statements for other domains' batches: one in the purchase's (the order
// earns its share), two in every refund's (the same share of the refund is taken back). All arithmetic in integer
// cents: round_half_down(x / d) is (2x + d - 1) / (2d) in SQLite's integer division, for x >= 0 and d > 0.

const roundHalfDown = (numerator: SQL, denominator: SQL) => sql`((2 * ${numerator} + ${denominator} - 1) / (2 * ${denominator}))`;

/** An ISO timestamp `hours` after `at`, in the service's format (milliseconds, `Z`). */
const hoursAfter = (at: SQL, hours: SQL) => sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${at}, '+' || ${hours} || ' hours')`;

/**
 * The purchase's one statement: when the buyer was referred (and the referrer's referrals are on), the order earns
 * round_half_down(total × percent / 100), the product's `referral_percent` where set, else the shop's. An earning of
 * 0 is not written. It becomes available at the order's time plus the longest of the shop's hold, the product's
 * warranty and the order's hold period. Keyed on the order number: nothing when the batch bought no order; the unique
 * index on the order (kind 'earning') is the backstop against a second earning.
 */
export function earningStatement(orderNumber: string, now: string, orderHoldHours: number): SQL {
  return sql`
    INSERT INTO referral_earnings (referrer_id, order_id, kind, earned_cents, amount_cents, status, available_at, created_at, updated_at)
    SELECT e.referrer_id, e.order_id, 'earning', e.cents, e.cents, 'pending', ${hoursAfter(sql`e.created_at`, sql`e.hold_hours`)}, ${now}, ${now}
    FROM (
      SELECT r.id AS referrer_id, o.id AS order_id, o.created_at,
             ${roundHalfDown(sql`o.total_amount_cents * coalesce(p.referral_percent, s.percent)`, sql`100`)} AS cents,
             max(s.hold_days * 24, p.warranty_hours, ${orderHoldHours}) AS hold_hours
      FROM orders o
        JOIN users b ON b.id = o.user_id
        JOIN users r ON r.id = b.referred_by AND r.referrals_off_at IS NULL
        JOIN products p ON p.id = o.product_id
        JOIN referral_settings s ON s.id = 1
      WHERE o.order_number = ${orderNumber}
    ) e
    WHERE e.cents > 0`;
}

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
