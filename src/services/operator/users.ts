import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { isUniqueViolation } from '../../db/errors';
import { deposits, orders, walletTransactions, type DepositRow, type OrderRow, type TransactionRow } from '../../db/schema';
import { fieldError, notFound } from '../../lib/errors';
import { pageWindow, type Page } from '../../lib/pagination';
import { isoNow } from '../../lib/time';
import { auditEntry, jsonDetails, writeAsActor, type Actor } from '../accounts/audit-log';
import type { Query } from '../caller';
import { OPERATOR, recordClaim, type IdempotencyClaim } from '../idempotency';
import { retireResetLinks } from '../accounts/password-resets';
import { keptCount } from '../accounts/counts';

// Users as the operator sees them (GET /admin/users, the console's users pages) and the operator's changes to them.

export interface OperatorUser {
  id: number;
  name: string;
  email: string;
  role: 'user' | 'operator';
  disabledAt: string | null;
  balanceCents: number;
  discountPercent: number;
  createdAt: string;
  /** Set while the account is on hold (src/services/accounts/holds.ts). */
  heldAt?: string | null;
  holdReason?: string | null;
  /** The referrer's code, or null (src/services/referrals/). */
  referredBy?: string | null;
}

export interface OperatorUserDetail extends OperatorUser {
  ordersCount: number;
  totalSpentCents: number;
}

const USER_COLUMNS = sql`id, name, email, role, disabled_at AS disabledAt, balance_cents AS balanceCents, created_at AS createdAt, discount_percent AS discountPercent,
  held_at AS heldAt, hold_reason AS holdReason, (SELECT r.referral_code FROM users r WHERE r.id = users.referred_by) AS referredBy`;

/** Who a listed row belongs to, by name and email (the console shows people, not ids). */
export interface Buyer {
  userName: string;
  userEmail: string;
}

/** A row's user's name and email as columns of a list: two lookups on the primary key per row of the page. */
export const buyerColumns = (userId: SQL) =>
  sql`(SELECT name FROM users WHERE id = ${userId}) AS userName, (SELECT email FROM users WHERE id = ${userId}) AS userEmail`;

/** A whole address is looked up exactly, through users_email_unique. */
export const isWholeEmail = (q: string) => /^[^\s@]+@[^\s@]+$/.test(q);

/**
 * Users, newest first. `email`: exactly that address (case-insensitive), through the unique index. `q`: a
 * case-insensitive (ASCII, as SQLite's lower()) substring of the name or email, the contract's search: a scan,
 * bounded by the page, the fallback rather than the only path (the console looks a whole address up by `email`).
 * instr(), not LIKE: D1 refuses LIKE patterns over 50 bytes, and instr() has no wildcards to escape.
 */
export const usersQuery = ({ q, email, onHold }: { q?: string; email?: string; onHold?: boolean }, page: Page): Query<{ rows: OperatorUser[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  const matching =
    email !== undefined
      ? sql`email = ${email}`
      : q === undefined || q === ''
        ? sql`1`
        : sql`(instr(lower(name), lower(${q})) > 0 OR instr(lower(email), lower(${q})) > 0)`;
  // The console's "On hold" filter: the accounts whose deposits and purchases are paused.
  const where = sql`WHERE ${matching}${onHold ? sql` AND held_at IS NOT NULL` : sql``}`;
  return {
    reads: [
      sql`SELECT ${USER_COLUMNS} FROM users ${where} ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM users ${where}`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<OperatorUser>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
  };
};

const detailOf = (userId: number | SQL) => sql`
  SELECT ${USER_COLUMNS},
         ${keptCount(sql`users.id`, 'orders_count')} AS ordersCount, ${keptCount(sql`users.id`, 'spent_cents')} AS totalSpentCents
  FROM users WHERE id = ${userId}`;

export const userDetailQuery = (userId: number): Query<OperatorUserDetail> => ({
  reads: [detailOf(userId)],
  parse: ([row]) => {
    const [user] = rowsOf<OperatorUserDetail>(row);
    if (!user) throw notFound('User');
    return user;
  },
});

const RECENT = 20;

/** A user's latest transactions, orders and deposits (the console's user page). */
export const userActivityQuery = (userId: number): Query<{ transactions: TransactionRow[]; orders: OrderRow[]; deposits: DepositRow[] }> => ({
  reads: [
    sql`SELECT ${columnsOf(walletTransactions)} FROM wallet_transactions WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC LIMIT ${RECENT}`,
    sql`SELECT ${columnsOf(orders)} FROM orders WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC LIMIT ${RECENT}`,
    sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC LIMIT ${RECENT}`,
  ],
  parse: ([transactions, orderRows, depositRows]) => ({
    transactions: rowsOf<TransactionRow>(transactions),
    orders: rowsOf<OrderRow>(orderRows),
    deposits: rowsOf<DepositRow>(depositRows),
  }),
});

/** The user as the response renders it, for an Idempotency-Key record: only once `updated` shows the write. */
const detailSnapshot = (userId: number, updated: SQL) => sql`
  SELECT d.id, json_object('id', d.id, 'name', d.name, 'email', d.email, 'role', d.role, 'disabledAt', d.disabledAt,
                           'balanceCents', d.balanceCents, 'createdAt', d.createdAt, 'ordersCount', d.ordersCount,
                           'totalSpentCents', d.totalSpentCents, 'discountPercent', d.discountPercent,
                           'heldAt', d.heldAt, 'holdReason', d.holdReason, 'referredBy', d.referredBy) AS snapshot
  FROM (${detailOf(userId)}) AS d WHERE EXISTS (SELECT 1 FROM users WHERE ${updated})`;

export interface UserChanges {
  name?: string;
  email?: string;
  role?: 'user' | 'operator';
  disabled?: boolean;
  discount_percent?: number;
}

/**
 * PATCH /admin/users/{id} and the console's disable/enable: one batch, the update, its audit entry (the changed
 * fields) and, with an Idempotency-Key, its record. Disabling keeps everything; the proofs of the user's keys and
 * sessions refuse them while `disabled_at` is set.
 */
export async function updateUser(d1: Db, actor: Actor, userId: number, changes: UserChanges, claim?: IdempotencyClaim): Promise<OperatorUserDetail> {
  const now = isoNow();
  const assignments = [
    ...(changes.name === undefined ? [] : [sql`name = ${changes.name}`]),
    ...(changes.email === undefined ? [] : [sql`email = ${changes.email}`]),
    ...(changes.role === undefined ? [] : [sql`role = ${changes.role}`]),
    // A disabled account keeps the time it was first disabled.
    ...(changes.disabled === undefined ? [] : [changes.disabled ? sql`disabled_at = coalesce(disabled_at, ${now})` : sql`disabled_at = NULL`]),
    ...(changes.discount_percent === undefined ? [] : [sql`discount_percent = ${changes.discount_percent}`]),
    sql`updated_at = ${now}`,
  ];
  const updated = sql`id = ${userId} AND updated_at = ${now}`;
  // Disabling the account, or giving it another address, retires its reset links (before the UPDATE, which the
  // comparison with the old address needs; a refused change rolls it back with the batch).
  const retireWhen = [
    ...(changes.disabled === true ? [sql`1`] : []),
    ...(changes.email === undefined ? [] : [sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND NOT (email = ${changes.email} COLLATE NOCASE))`]),
  ];
  try {
    const { reads } = await writeAsActor(d1, actor, {
      writes: [
        ...(retireWhen.length === 0 ? [] : [retireResetLinks(sql`${userId}`, now, sql`(${sql.join(retireWhen, sql` OR `)})`)]),
        sql`UPDATE users SET ${sql.join(assignments, sql`, `)} WHERE id = ${userId}`,
        ...(claim ? recordClaim(OPERATOR, claim, detailSnapshot(userId, updated)) : []),
        auditEntry(actor, { action: 'user.updated', target: sql`'user:' || id`, details: jsonDetails({ ...changes }), from: sql`FROM users WHERE ${updated}` }, now),
      ],
      reads: [detailOf(userId), sql`SELECT 1 FROM users WHERE ${updated}`],
      committed: ([, row]) => rowsOf(row).length > 0,
    });
    const [user] = rowsOf<OperatorUserDetail>(reads[0]);
    if (!user) throw notFound('User');
    return user;
  } catch (err) {
    if (isUniqueViolation(err, 'users.email')) throw fieldError('email', 'The email has already been taken.');
    throw err;
  }
}
