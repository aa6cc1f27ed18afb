import { count, desc, eq, sql } from 'drizzle-orm';
import { columnsOf, rowsOf, runBatch } from '../db/batch';
import { getDb, type Db } from '../db/client';
import { users, walletTransactions, type TransactionRow } from '../db/schema';
import { ApiError, notFound } from '../lib/errors';
import { centsToAmount } from '../lib/money';
import { pageWindow, type Page } from '../lib/pagination';
import { isoNow } from '../lib/time';
import { newOperationId, walletMovement } from './ledger';

export async function getBalanceCents(d1: Db, userId: number): Promise<number> {
  const [user] = await getDb(d1).select({ balanceCents: users.balanceCents }).from(users).where(eq(users.id, userId));
  if (!user) throw notFound('User');
  return user.balanceCents;
}

export async function listTransactions(d1: Db, userId: number, page: Page) {
  const db = getDb(d1);
  const { limit, offset } = pageWindow(page);
  const [rows, [{ total }]] = await db.batch([
    db
      .select()
      .from(walletTransactions)
      .where(eq(walletTransactions.userId, userId))
      .orderBy(desc(walletTransactions.createdAt), desc(walletTransactions.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(walletTransactions).where(eq(walletTransactions.userId, userId)),
  ]);
  return { rows, total };
}

/** Operator credit or debit (signed cents) as an `adjustment` ledger row; a debit never takes a balance below zero. */
export async function adjustBalance(d1: Db, userId: number, amountCents: number, description: string): Promise<TransactionRow> {
  const operationId = newOperationId();
  const [, , userResult, transactionResult] = await runBatch(d1, [
    ...walletMovement({
      userId,
      type: 'adjustment',
      operationId,
      now: isoNow(),
      source: sql`SELECT ${amountCents} AS amount, ${description} AS description, NULL AS order_id, NULL AS deposit_id`,
    }),
    sql`SELECT balance_cents AS balanceCents FROM users WHERE id = ${userId}`,
    sql`SELECT ${columnsOf(walletTransactions)} FROM wallet_transactions WHERE operation_id = ${operationId}`,
  ]);
  const [user] = rowsOf<{ balanceCents: number }>(userResult);
  const [transaction] = rowsOf<TransactionRow>(transactionResult);
  if (!user) throw notFound('User');
  if (!transaction) {
    throw new ApiError('INSUFFICIENT_BALANCE', 'The adjustment would take the balance below zero.', {
      code: 'INSUFFICIENT_BALANCE',
      required: centsToAmount(-amountCents),
      balance: centsToAmount(user.balanceCents),
    });
  }
  return transaction;
}
