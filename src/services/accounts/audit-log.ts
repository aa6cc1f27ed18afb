import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { writeBatch, type WriteOutcome, type WritePlan } from '../../db/d1';
import { withinDays } from '../../db/date-range';
import { isNotNullViolation } from '../../db/errors';
import { auditLog, type AuditAction, type AuditRow } from '../../db/schema';
import type { DateRange } from '../../lib/date-range';
import { notFound } from '../../lib/errors';
import { pageWindow, type Page } from '../../lib/pagination';
import { proveCaller, proveOperator, type Caller, type Query } from '../caller';

// The audit log: every operator write, from the console or the admin API, appends one entry in the batch of its
// effect, only when the effect happened (the entry's INSERT selects from the row the effect wrote). Details are JSON
// objects of what changed, built from the effect's own rows or the request's non-secret fields: never a password,
// key, token or stock item.

/**
 * Who performs an operator write. `name` is SQL text: 'admin_token' (the admin API, whose token the middleware
 * checked), or 'user:<id>' of a console session while it is a live operator's, NULL otherwise: an effect then makes
 * its audit entry fail the NOT NULL check and the whole batch rolls back. The session's proof leads the batch.
 */
export interface Actor {
  name: SQL;
  session?: Caller;
  /**
   * Test mode's play of an operator (`POST /test/claims/...`, `/test/orders/{id}/refund`): a test key acts as the
   * operator of its own sandbox rows only. The write is limited to rows whose user is this id (SQL), and the key's
   * proof is checked as an API key's, not an operator's.
   */
  ownRowsOf?: SQL;
}

export const ADMIN_TOKEN_ACTOR: Actor = { name: sql`'admin_token'` };

/** A test key playing the operator on its own sandbox rows (see `ownRowsOf`): audited as its sandbox user. */
export const sandboxOwnerActor = (caller: Caller): Actor => ({
  name: sql`(SELECT 'user:' || id FROM users WHERE id = ${caller.userId})`,
  session: caller,
  ownRowsOf: caller.userId,
});

/** The rows an actor may change: every row for an operator, the actor's own (`userId`: SQL of the row's user) in test mode. */
export const actorMayChange = (actor: Actor, userId: SQL): SQL => (actor.ownRowsOf ? sql`${userId} = ${actor.ownRowsOf}` : sql`1`);

export const operatorActor = (session: Caller): Actor => ({
  name: sql`(SELECT 'user:' || id FROM users WHERE id = ${session.userId} AND role = 'operator')`,
  session,
});

interface Entry {
  action: AuditAction;
  /** SQL text, e.g. 'user:' || u.id */
  target: SQL;
  /** SQL JSON object */
  details: SQL;
  /** `FROM ... WHERE ...`: the effect's row; no row, no entry. */
  from: SQL;
}

/** The entry's INSERT, for the effect's batch (after the effect). */
export function auditEntry(actor: Actor, { action, target, details, from }: Entry, now: string): SQL {
  return sql`INSERT INTO audit_log (actor, action, target, details, created_at)
             SELECT ${actor.name}, ${action}, ${target}, ${details}, ${now} ${from}`;
}

/** A JSON object of request fields (never secrets), as SQL; undefined fields are left out. */
export const jsonDetails = (fields: Record<string, unknown>) => sql`json(${JSON.stringify(fields)})`;

/**
 * An operator write: `writeBatch` with the console session's proof first. A session that is not a live operator's
 * changes nothing: 404 (a live non-operator) or 401 (no live session: the dashboard sends it to sign-in). Without an
 * actor (a gateway's webhook crediting a deposit) it is a plain `writeBatch`.
 */
export async function writeAsActor(d1: Db, actor: Actor | undefined, plan: Omit<WritePlan, 'before'>): Promise<WriteOutcome> {
  try {
    const outcome = await writeBatch(d1, { ...plan, before: actor?.session ? [actor.session.proof] : [] });
    if (actor?.session && !outcome.settled) (actor.ownRowsOf ? proveCaller : proveOperator)(actor.session, outcome.before[0]);
    return outcome;
  } catch (err) {
    if (isNotNullViolation(err, 'audit_log.actor')) throw notFound('Page');
    throw err;
  }
}

/** An entry with its actor's name and email when the actor is a console session's operator (null for the admin token). */
export interface AuditEntryRow extends AuditRow {
  actorName: string | null;
  actorEmail: string | null;
}

/** Newest first, within the range of days; the actor's user found through the primary key from `user:<id>`. */
export const auditLogQuery = (page: Page, range: DateRange = {}): Query<{ rows: AuditEntryRow[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  const conditions = withinDays(sql`created_at`, range);
  const where = conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`;
  const actorId = sql`CASE WHEN actor LIKE 'user:%' THEN CAST(substr(actor, 6) AS INTEGER) END`;
  return {
    reads: [
      sql`SELECT ${columnsOf(auditLog)}, (SELECT name FROM users WHERE id = ${actorId}) AS actorName, (SELECT email FROM users WHERE id = ${actorId}) AS actorEmail
          FROM audit_log ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM audit_log ${where}`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<AuditEntryRow>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
  };
};
