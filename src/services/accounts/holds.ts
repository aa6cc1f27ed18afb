import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { ApiError, notFound } from '../../lib/errors';
import { isoNow } from '../../lib/time';
import { auditEntry, writeAsActor, type Actor } from './audit-log';
import type { Caller } from '../caller';
import { matchingRules, refuseIfBlocked } from './blocklist';

// Holds: a deposit whose payment was taken back at the vendor (a refund or a dispute) puts its user's account on
// hold, in the batch that records the reversal; an operator puts or lifts one with a reason. While on hold the
// account's deposits and purchases are refused (403 ACCOUNT_ON_HOLD); reads still work.

export const onHold = () =>
  new ApiError('ACCOUNT_ON_HOLD', 'This account is on hold: deposits and purchases are paused until the shop has looked at it. Contact the shop.');

/**
 * What a deposit or purchase batch adds for the account and the place it acts from: a condition on its creating
 * statement (no blocklist rule matches, the account is not on hold) and the reads that explain a refusal, so both
 * cost nothing beyond the batch. The purchase's own statement carries it, so every path that buys inherits it.
 */
export interface AccountGate {
  allows: SQL;
  /** The same condition as the refusals it stands for, in the order they are said (a purchase's guard list). */
  guards: { code: 'BLOCKED' | 'ACCOUNT_ON_HOLD'; allows: SQL }[];
  reads: SQL[];
  /** Throws BLOCKED (the rules are remembered on the caller's place) or ACCOUNT_ON_HOLD from the batch's reads. */
  check: (results: D1Result[]) => void;
}

export function accountGate(caller: Pick<Caller, 'userId' | 'place'>): AccountGate {
  const rules = matchingRules(caller.userId, caller.place);
  const held = sql`SELECT 1 FROM users WHERE id = ${caller.userId} AND held_at IS NOT NULL`;
  return {
    allows: sql`NOT EXISTS (${rules}) AND NOT EXISTS (${held})`,
    guards: [
      { code: 'BLOCKED', allows: sql`NOT EXISTS (${rules})` },
      { code: 'ACCOUNT_ON_HOLD', allows: sql`NOT EXISTS (${held})` },
    ],
    reads: [rules, held],
    check: ([blockedResult, heldResult]) => {
      refuseIfBlocked(blockedResult, caller.place);
      if (rowsOf(heldResult).length > 0) throw onHold();
    },
  };
}

/**
 * In the batch that records a gateway event: the deposit's user goes on hold when that event was recorded as
 * `reversed` (money taken back after a credit). An account already on hold keeps its first reason.
 */
export const holdOnReversal = (eventReference: string, now: string): SQL => sql`
  UPDATE users SET held_at = ${now},
    hold_reason = (SELECT 'Payment of deposit #' || g.deposit_id || ' was reversed at the vendor (' || g.status || ').'
                   FROM gateway_events g WHERE g.reference = ${eventReference})
  WHERE held_at IS NULL AND id = (SELECT d.user_id FROM gateway_events g JOIN deposits d ON d.id = g.deposit_id
                                  WHERE g.reference = ${eventReference} AND g.outcome = 'reversed')`;

export interface HoldState {
  userId: number;
  heldAt: string | null;
  holdReason: string | null;
}

const holdOf = (userId: number) => sql`SELECT id AS userId, held_at AS heldAt, hold_reason AS holdReason FROM users WHERE id = ${userId}`;

/**
 * The operator puts an account on hold (`reason` kept) or lifts its hold (`reason` null), audited in the same batch;
 * 404 for an unknown user. Putting a hold on an account already on hold replaces the reason.
 */
export async function setHold(d1: Db, actor: Actor, userId: number, reason: string | null): Promise<HoldState> {
  const now = isoNow();
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      reason === null
        ? sql`UPDATE users SET held_at = NULL, hold_reason = NULL, updated_at = ${now} WHERE id = ${userId}`
        : sql`UPDATE users SET held_at = ${now}, hold_reason = ${reason}, updated_at = ${now} WHERE id = ${userId}`,
      auditEntry(
        actor,
        {
          action: reason === null ? 'user.released' : 'user.held',
          target: sql`'user:' || u.id`,
          details: sql`json_object('reason', u.hold_reason)`,
          from: sql`FROM users u WHERE u.id = ${userId} AND u.updated_at = ${now}`,
        },
        now,
      ),
    ],
    reads: [holdOf(userId), sql`SELECT updated_at = ${now} AS mine FROM users WHERE id = ${userId}`],
    committed: ([, mine]) => rowsOf<{ mine: number }>(mine)[0]?.mine === 1,
  });
  const [state] = rowsOf<HoldState>(reads[0]);
  if (!state) throw notFound('User');
  return state;
}
