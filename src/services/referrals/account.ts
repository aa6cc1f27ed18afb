import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import { pageWindow, type Page } from '../../lib/pagination';
import type { Caller, Query } from '../caller';

// A referrer's own view: the code, the balances and the earnings. An earning not moved yet is `pending` until its
// `available_at` (read from the clock, no job needed) and `available` from then on; the order it came from must also
// have left its hold period (no longer `pending`), so nothing moves while the buyer can still cancel, whatever the
// hold the earning was written with, and nothing moves while a warranty claim on its order is open (it may be refunded).

/** SQL true for a row of `referral_earnings e` that a transfer at `now` moves. */
export const movable = (now: string) =>
  sql`e.status = 'pending' AND e.available_at <= ${now} AND (SELECT o.status FROM orders o WHERE o.id = e.order_id) <> 'pending'
      AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.order_id = e.order_id AND c.status = 'open')`;

export interface ReferralSummary {
  code: string;
  percent: number;
  pendingCents: number;
  availableCents: number;
  transferredCents: number;
  /** The code of whoever referred this user, or null. */
  referredBy: string | null;
}

/** Balances read from the rows not moved yet (index referral_earnings_held) and the kept transferred total. */
export const summaryQuery = (userId: SQL | number, now: string): Query<ReferralSummary> => ({
  reads: [
    sql`SELECT u.referral_code AS code, s.percent, u.referral_transferred_cents AS transferredCents,
               (SELECT r.referral_code FROM users r WHERE r.id = u.referred_by) AS referredBy,
               coalesce((SELECT sum(CASE WHEN ${movable(now)} THEN 0 ELSE e.amount_cents END) FROM referral_earnings e
                         WHERE e.referrer_id = u.id AND e.status = 'pending'), 0) AS pendingCents,
               coalesce((SELECT sum(CASE WHEN ${movable(now)} THEN e.amount_cents ELSE 0 END) FROM referral_earnings e
                         WHERE e.referrer_id = u.id AND e.status = 'pending'), 0) AS availableCents
        FROM users u JOIN referral_settings s ON s.id = 1 WHERE u.id = ${userId}`,
  ],
  parse: ([row]) => rowsOf<ReferralSummary>(row)[0],
});

export interface EarningView {
  id: number;
  orderId: number;
  orderNumber: string;
  kind: 'earning' | 'offset';
  earnedCents: number;
  amountCents: number;
  status: 'pending' | 'available' | 'transferred' | 'reversed';
  availableAt: string;
  createdAt: string;
}

/** A page of the user's earnings, newest first; the total is the count kept on the user's row (issue #50). */
export const earningsQuery = (caller: Pick<Caller, 'userId'>, page: Page, now: string): Query<{ rows: EarningView[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  return {
    reads: [
      sql`SELECT e.id, e.order_id AS orderId, o.order_number AS orderNumber, e.kind, e.earned_cents AS earnedCents, e.amount_cents AS amountCents,
                 CASE WHEN e.status <> 'pending' THEN e.status WHEN ${movable(now)} THEN 'available' ELSE 'pending' END AS status,
                 e.available_at AS availableAt, e.created_at AS createdAt
          FROM referral_earnings e JOIN orders o ON o.id = e.order_id
          WHERE e.referrer_id = ${caller.userId}
          ORDER BY e.created_at DESC, e.id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT referral_earnings_count AS total FROM users WHERE id = ${caller.userId}`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<EarningView>(rows), total: rowsOf<{ total: number }>(total)[0]?.total ?? 0 }),
  };
};
