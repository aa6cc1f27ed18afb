import { sql } from 'drizzle-orm';
import { amountJson } from '../../db/json';
import { columnsOf, rowJson, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { walletTransactions, type TransactionRow } from '../../db/schema';
import { ApiError, notFound } from '../../lib/errors';
import { centsToAmount } from '../../lib/money';
import { pageWindow, type Page } from '../../lib/pagination';
import { isoNow } from '../../lib/time';
import { queryAs, type Caller, type Query } from '../caller';
import { OPERATOR, recordClaim, type IdempotencyClaim } from '../idempotency';
import { eventIdsOf, inOutbox, newEvent, recordEvent, type Publish } from '../events/log';
import { newOperationId, walletMovement } from '../ledger';
import { auditEntry, writeAsActor, type Actor } from '../accounts/audit-log';
import { keptTotal } from '../accounts/counts';

export const balanceQuery = (caller: Caller): Query<number> => ({
  reads: [sql`SELECT balance_cents AS balanceCents FROM users WHERE id = ${caller.userId}`],
  parse: ([user]) => rowsOf<{ balanceCents: number }>(user)[0].balanceCents,
});

export const transactionsQuery = (caller: Caller, page: Page): Query<{ rows: TransactionRow[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  return {
    reads: [
      sql`SELECT ${columnsOf(walletTransactions)} FROM wallet_transactions WHERE user_id = ${caller.userId}
          ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      keptTotal(caller.userId, 'transactions_count'),
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<TransactionRow>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
  };
};

export async function getBalanceCents(d1: Db, caller: Caller): Promise<number> {
  const [balanceCents] = await queryAs(d1, caller, [balanceQuery(caller)]);
  return balanceCents;
}

export async function listTransactions(d1: Db, caller: Caller, page: Page) {
  const [transactions] = await queryAs(d1, caller, [transactionsQuery(caller, page)]);
  return transactions;
}

/** Operator credit or debit (signed cents) as an `adjustment` ledger row; a debit never takes a balance below zero. */
export async function adjustBalance(
  d1: Db,
  actor: Actor,
  userId: number,
  amountCents: number,
  description: string,
  claim?: IdempotencyClaim,
  publish?: Publish,
): Promise<TransactionRow> {
  const operationId = newOperationId();
  const adjustment = sql`SELECT id, ${rowJson(walletTransactions)} AS snapshot FROM wallet_transactions WHERE operation_id = ${operationId}`;
  const now = isoNow();
  const event = newEvent('balance.adjusted', now);
  const { reads: [userResult, transactionResult, outboxResult] } = await writeAsActor(d1, actor, {
    writes: [
      ...walletMovement({
        userId,
        type: 'adjustment',
        operationId,
        now,
        source: sql`SELECT ${amountCents} AS amount, ${description} AS description, NULL AS order_id, NULL AS deposit_id`,
      }),
      ...(claim ? recordClaim(OPERATOR, claim, adjustment) : []),
      recordEvent(event, walletTransactions, sql`operation_id = ${operationId}`),
      auditEntry(
        actor,
        {
          action: 'balance.adjusted',
          target: sql`'user:' || user_id`,
          details: sql`json_object('amount', ${amountJson(sql`amount_cents`)}, 'description', description, 'transaction_id', id, 'balance_after', ${amountJson(sql`balance_after_cents`)})`,
          from: sql`FROM wallet_transactions WHERE operation_id = ${operationId}`,
        },
        now,
      ),
    ],
    reads: [
      sql`SELECT balance_cents AS balanceCents FROM users WHERE id = ${userId}`,
      sql`SELECT ${columnsOf(walletTransactions)} FROM wallet_transactions WHERE operation_id = ${operationId}`,
      inOutbox(event),
    ],
    committed: ([, transaction]) => rowsOf(transaction).length > 0,
  });
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
  publish?.(eventIdsOf(outboxResult));
  return transaction;
}
