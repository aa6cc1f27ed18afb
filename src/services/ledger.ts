import { sql, type SQL } from 'drizzle-orm';

export type TransactionType = 'deposit' | 'purchase' | 'refund' | 'adjustment' | 'commission';

export interface WalletMovement {
  /** The user's id, or a scalar SQL expression of it (a caller's credential subquery). */
  userId: number | SQL;
  type: TransactionType;
  /**
   * A SELECT yielding one row (`amount`, `description`, `order_id`, `deposit_id`) when the movement applies and
   * none when its guard fails. `amount` is signed cents.
   */
  source: SQL;
  /** Pre-generated id of this movement: the balance update is keyed on the ledger row carrying it. */
  operationId: string;
  now: string;
}

/**
 * The two statements of every balance change, for inclusion in a caller's batch: first the ledger row (written only
 * when the source yields a row and the balance stays >= 0, with `balance_after` computed from the balance it
 * changes), then the balance update, which applies exactly that row's amount and nothing when no row was written.
 * So a balance is always the sum of its ledger, by construction.
 */
export function walletMovement(movement: WalletMovement): [SQL, SQL] {
  const { userId, type, source, operationId, now } = movement;
  return [
    sql`
      INSERT INTO wallet_transactions
        (user_id, type, amount_cents, balance_after_cents, description, order_id, deposit_id, operation_id, created_at)
      SELECT u.id, ${type}, m.amount, u.balance_cents + m.amount, m.description, m.order_id, m.deposit_id, ${operationId}, ${now}
      FROM users u, (${source}) AS m
      WHERE u.id = ${userId} AND u.balance_cents + m.amount >= 0`,
    sql`
      UPDATE users
      SET balance_cents = balance_cents + (SELECT amount_cents FROM wallet_transactions WHERE operation_id = ${operationId})
      WHERE id = ${userId} AND EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${operationId})`,
  ];
}

export const newOperationId = () => crypto.randomUUID();
