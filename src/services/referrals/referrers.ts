import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { notFound } from '../../lib/errors';
import { pageWindow, type Page } from '../../lib/pagination';
import { isoNow } from '../../lib/time';
import { auditEntry, writeAsActor, type Actor } from '../accounts/audit-log';
import type { Query } from '../caller';
import { movable } from './account';

// The operator's view of the programme: who brought buyers, what each earned, and the switch that stops one.

export interface ReferrerRow {
  id: number;
  name: string;
  email: string;
  code: string;
  referralsOffAt: string | null;
  referred: number;
  pendingCents: number;
  availableCents: number;
  transferredCents: number;
}

/** Users who referred someone, newest referrer first. */
export const referrersQuery = (page: Page, now: string): Query<{ rows: ReferrerRow[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  const referrers = sql`SELECT DISTINCT referred_by AS id FROM users WHERE referred_by IS NOT NULL`;
  const held = (when: 'available' | 'pending') =>
    sql`coalesce((SELECT sum(e.amount_cents) FROM referral_earnings e WHERE e.referrer_id = u.id AND e.status = 'pending'
                    AND ${when === 'available' ? sql`` : sql`NOT`} (${movable(now)})), 0)`;
  return {
    reads: [
      sql`SELECT u.id, u.name, u.email, u.referral_code AS code, u.referrals_off_at AS referralsOffAt,
                 (SELECT count(*) FROM users b WHERE b.referred_by = u.id) AS referred,
                 ${held('pending')} AS pendingCents, ${held('available')} AS availableCents, u.referral_transferred_cents AS transferredCents
          FROM users u WHERE u.id IN (${referrers})
          ORDER BY u.id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM (${referrers})`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<ReferrerRow>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
  };
};

/**
 * Switches a user's referrals off (their earnings still in their hold are reversed in the same batch; what is
 * available stays theirs to move) or back on (earning resumes with the next order). Audited. 404 for an unknown user.
 */
export async function setReferralsOn(d1: Db, actor: Actor, userId: number, on: boolean): Promise<void> {
  const now = isoNow();
  const switched = sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND updated_at = ${now})`;
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      on
        ? sql`UPDATE users SET referrals_off_at = NULL, updated_at = ${now} WHERE id = ${userId}`
        : sql`UPDATE users SET referrals_off_at = coalesce(referrals_off_at, ${now}), updated_at = ${now} WHERE id = ${userId}`,
      ...(on
        ? []
        : [
            sql`UPDATE referral_earnings AS e SET amount_cents = 0, status = 'reversed', updated_at = ${now}
                WHERE e.referrer_id = ${userId} AND e.kind = 'earning' AND e.status = 'pending' AND NOT (${movable(now)}) AND ${switched}`,
          ]),
      auditEntry(
        actor,
        {
          action: on ? 'user.referrals_on' : 'user.referrals_off',
          target: sql`'user:' || id`,
          details: sql`json_object('referrals_off_at', referrals_off_at)`,
          from: sql`FROM users WHERE id = ${userId} AND updated_at = ${now}`,
        },
        now,
      ),
    ],
    reads: [sql`SELECT 1 FROM users WHERE id = ${userId}`, sql`SELECT 1 FROM users WHERE id = ${userId} AND updated_at = ${now}`],
    committed: ([, mine]) => rowsOf(mine).length > 0,
  });
  if (rowsOf(reads[0]).length === 0) throw notFound('User');
}
