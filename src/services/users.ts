import { count, desc, eq, sql, type SQL } from 'drizzle-orm';
import { changesOf, rowsOf, runBatch } from '../db/batch';
import { getDb, type Db } from '../db/client';
import { isUniqueViolation } from '../db/errors';
import { orders, users, walletTransactions } from '../db/schema';
import { hashPassword, verifyPassword } from '../lib/crypto';
import { fieldError, notFound } from '../lib/errors';
import { isoNow } from '../lib/time';
import { insertKeyUnderLimit, issueKey } from './api-keys';
import { endSessionsOnPasswordChange, insertSession, type SessionToken } from './sessions';

const profileColumns = {
  id: users.id,
  name: users.name,
  email: users.email,
  balanceCents: users.balanceCents,
  createdAt: users.createdAt,
};

export interface UserProfile {
  id: number;
  name: string;
  email: string;
  balanceCents: number;
  createdAt: string;
}

// Emails are unique case-insensitively (COLLATE NOCASE); a concurrent duplicate surfaces as the index violation.
const emailTaken = () => fieldError('email', 'The email has already been taken.');

/** One batch: the user row, then `companion` (addressed to the new user by email), or neither. */
async function insertUser(d1: Db, input: { name: string; email: string; password: string }, companion: (owner: SQL, now: string) => SQL) {
  const now = isoNow();
  const passwordHash = await hashPassword(input.password);
  try {
    const [created] = await runBatch(d1, [
      sql`INSERT INTO users (name, email, password_hash, balance_cents, created_at, updated_at)
          VALUES (${input.name}, ${input.email}, ${passwordHash}, 0, ${now}, ${now})
          RETURNING id, name, email, balance_cents AS balanceCents, created_at AS createdAt`,
      companion(sql`(SELECT id FROM users WHERE email = ${input.email})`, now),
    ]);
    const [user] = rowsOf<UserProfile>(created);
    return user;
  } catch (err) {
    if (isUniqueViolation(err, 'users.email')) throw emailTaken();
    throw err;
  }
}

/** Operator creation of a user together with its first API key, in one batch. */
export async function createUser(d1: Db, input: { name: string; email: string; password: string }) {
  const issued = await issueKey();
  const user = await insertUser(d1, input, (owner, now) => insertKeyUnderLimit(owner, 'Default key', issued, now));
  return { user, apiKey: issued.key };
}

/** Self-service sign-up (dashboard): balance 0 and no API key; the user's first session opens in the same batch. */
export async function signUp(d1: Db, input: { name: string; email: string; password: string }, session: SessionToken) {
  return insertUser(d1, input, (owner, now) => insertSession(owner, session.tokenHash, now));
}

export async function getProfile(d1: Db, userId: number): Promise<UserProfile> {
  const [user] = await getDb(d1).select(profileColumns).from(users).where(eq(users.id, userId));
  if (!user) throw notFound('User');
  return user;
}

export async function updateProfile(d1: Db, userId: number, changes: { name?: string; email?: string }): Promise<UserProfile> {
  const db = getDb(d1);
  try {
    const [user] = await db
      .update(users)
      .set({ ...changes, updatedAt: isoNow() })
      .where(eq(users.id, userId))
      .returning(profileColumns);
    if (!user) throw notFound('User');
    return user;
  } catch (err) {
    if (isUniqueViolation(err, 'users.email')) throw emailTaken();
    throw err;
  }
}

/**
 * Ends the user's sessions in the same batch: all of them (the API), or all but `keepSessionId` (the dashboard keeps
 * the session that made the change).
 */
export async function changePassword(d1: Db, userId: number, current: string, next: string, keepSessionId: number | null = null): Promise<void> {
  const db = getDb(d1);
  const [user] = await db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, userId));
  if (!user) throw notFound('User');
  if (!(await verifyPassword(current, user.passwordHash))) {
    throw fieldError('current_password', 'The current password is incorrect.');
  }
  const nextHash = await hashPassword(next);
  // Guarded on the hash just verified, so a concurrent change is not silently overwritten.
  const [updated] = await runBatch(d1, [
    sql`UPDATE users SET password_hash = ${nextHash}, updated_at = ${isoNow()} WHERE id = ${userId} AND password_hash = ${user.passwordHash}`,
    endSessionsOnPasswordChange(userId, nextHash, keepSessionId),
  ]);
  if (changesOf(updated) === 0) throw fieldError('current_password', 'The password was changed concurrently; try again.');
}

const RECENT = 5;

export async function getDashboard(d1: Db, userId: number) {
  const db = getDb(d1);
  const [[user], [stats], recentOrders, recentTransactions] = await db.batch([
    db.select({ balanceCents: users.balanceCents }).from(users).where(eq(users.id, userId)),
    db
      .select({
        totalOrders: count(),
        totalSpentCents: sql<number>`coalesce(sum(CASE WHEN ${orders.status} <> 'cancelled' THEN ${orders.totalAmountCents} END), 0)`,
        pendingOrders: sql<number>`count(CASE WHEN ${orders.status} = 'pending' THEN 1 END)`,
      })
      .from(orders)
      .where(eq(orders.userId, userId)),
    db.select().from(orders).where(eq(orders.userId, userId)).orderBy(desc(orders.createdAt), desc(orders.id)).limit(RECENT),
    db
      .select()
      .from(walletTransactions)
      .where(eq(walletTransactions.userId, userId))
      .orderBy(desc(walletTransactions.createdAt), desc(walletTransactions.id))
      .limit(RECENT),
  ]);
  if (!user) throw notFound('User');
  return { balanceCents: user.balanceCents, ...stats, recentOrders, recentTransactions };
}
