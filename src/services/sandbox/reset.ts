import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { isoNow } from '../../lib/time';
import { writeAs, type Caller } from '../caller';
import { newOperationId } from '../ledger';
import { testMoney } from './account';

// `POST /test/reset` (test mode only, on the sandbox): the caller's sandbox starts over. One batch with the key's
// proof: their orders (and the generated items they took, and the claims reported on them), deposits (and their
// gateway log), ledger (refunds included), events with their webhook deliveries, idempotency records, and whatever
// else of theirs a sandbox keeps (emails, verification and reset links, sessions) are deleted, a hold is lifted, and
// the balance is set to exactly the test money again. Their keys and webhook endpoints stay. (The blocklist is the
// shop's, not a user's, and only the operator writes it: live.) The items an order took are not returned: the next
// refresh of the mirror (src/services/sandbox/mirror.ts) tops every product up to the live shop's count.

export async function resetSandbox(sandbox: Db, caller: Caller): Promise<{ balanceCents: number }> {
  const user = caller.userId;
  const now = isoNow();
  const operationId = newOperationId();
  const [balance] = await writeAs(sandbox, caller, {
    writes: [
      // Claims first: they name the items and orders deleted below.
      sql`DELETE FROM claims WHERE user_id = ${user} OR order_id IN (SELECT id FROM orders WHERE user_id = ${user})`,
      sql`DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM events WHERE user_id = ${user})`,
      sql`DELETE FROM events WHERE user_id = ${user}`,
      // Documents name the ledger rows, orders and deposits deleted below; their numbers are not given again.
      sql`UPDATE document_sequences SET deleted_up_to = max(deleted_up_to, coalesce((SELECT max(sequence) FROM documents d WHERE d.type = document_sequences.type), 0))
          WHERE ${user} IS NOT NULL`,
      sql`DELETE FROM documents WHERE user_id = ${user}`,
      sql`DELETE FROM wallet_transactions WHERE user_id = ${user}`,
      sql`DELETE FROM stock_items WHERE order_id IN (SELECT id FROM orders WHERE user_id = ${user})`,
      sql`DELETE FROM coupon_redemptions WHERE order_id IN (SELECT id FROM orders WHERE user_id = ${user})`,
      sql`DELETE FROM gateway_events WHERE deposit_id IN (SELECT id FROM deposits WHERE user_id = ${user})`,
      sql`DELETE FROM idempotency_keys WHERE user_id = ${user}`,
      sql`DELETE FROM orders WHERE user_id = ${user}`,
      sql`DELETE FROM deposits WHERE user_id = ${user}`,
      sql`DELETE FROM emails WHERE user_id = ${user}`,
      sql`DELETE FROM email_verifications WHERE user_id = ${user}`,
      sql`DELETE FROM password_resets WHERE user_id = ${user}`,
      sql`DELETE FROM sessions WHERE user_id = ${user}`,
      sql`UPDATE users SET balance_cents = 0, held_at = NULL, hold_reason = NULL, updated_at = ${now} WHERE id = ${user}`,
      ...testMoney(user, now, operationId, sql`${user} IS NOT NULL`),
    ],
    reads: [sql`SELECT u.balance_cents AS balanceCents FROM users u WHERE u.id = ${user}
                 AND EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${operationId})`],
    committed: ([row]) => rowsOf(row).length > 0,
  });
  return rowsOf<{ balanceCents: number }>(balance)[0] ?? { balanceCents: 0 };
}
