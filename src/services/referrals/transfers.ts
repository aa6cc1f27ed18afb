import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { ApiError } from '../../lib/errors';
import { formatUsd } from '../../lib/money';
import { isoNow } from '../../lib/time';
import { writeAs, type Caller } from '../caller';
import { recordClaim, type IdempotencyClaim } from '../idempotency';
import { newOperationId, walletMovement } from '../ledger';
import { movable } from './account';

// Moving earnings into the wallet: one batch. The `commission` ledger row is written only when what is available
// now (the sum of the movable rows, offsets included) reaches the shop's minimum; the rows it summed are then marked
// transferred by that row's id, in the same transaction, so racing transfers move each earning once (the second
// finds nothing left), and a refund racing a transfer either reverses the earning before it moves or offsets it after.

export interface Transfer {
  amountCents: number;
  transactionId: number;
  balanceCents: number;
}

export async function transferEarnings(d1: Db, caller: Caller, claim?: IdempotencyClaim): Promise<Transfer> {
  const now = isoNow();
  const operationId = newOperationId();
  const user = caller.userId;
  const moved = sql`EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${operationId})`;
  const commission = sql`(SELECT id FROM wallet_transactions WHERE operation_id = ${operationId})`;
  const commissionCents = sql`(SELECT amount_cents FROM wallet_transactions WHERE operation_id = ${operationId})`;
  const available = sql`SELECT coalesce(sum(e.amount_cents), 0) AS cents FROM referral_earnings e WHERE e.referrer_id = ${user} AND ${movable(now)}`;
  const transferRow = sql`SELECT amount_cents AS amountCents, id AS transactionId, balance_after_cents AS balanceCents
                          FROM wallet_transactions WHERE operation_id = ${operationId}`;
  const [row, state] = await writeAs(d1, caller, {
    writes: [
      ...walletMovement({
        userId: user,
        type: 'commission',
        operationId,
        now,
        source: sql`
          SELECT a.cents AS amount, 'Referral earnings moved to the wallet' AS description, NULL AS order_id, NULL AS deposit_id
          FROM (${available}) a JOIN referral_settings s ON s.id = 1
          WHERE a.cents > 0 AND a.cents >= s.min_transfer_cents`,
      }),
      sql`UPDATE referral_earnings AS e SET status = 'transferred', transaction_id = ${commission}, updated_at = ${now}
          WHERE e.referrer_id = ${user} AND ${movable(now)} AND ${moved}`,
      sql`UPDATE users SET referral_transferred_cents = referral_transferred_cents + ${commissionCents} WHERE id = ${user} AND ${moved}`,
      // Backstop: the rows marked must add up to the row that moved them, else the count's CHECK rolls it all back.
      sql`UPDATE users SET referral_earnings_count = -1
          WHERE id = ${user} AND ${moved}
            AND (SELECT coalesce(sum(amount_cents), 0) FROM referral_earnings WHERE transaction_id = ${commission}) <> ${commissionCents}`,
      ...(claim
        ? recordClaim(caller, claim, sql`SELECT transactionId AS id, json_object('amountCents', amountCents, 'transactionId', transactionId, 'balanceCents', balanceCents) AS snapshot
                                         FROM (${transferRow})`)
        : []),
    ],
    reads: [transferRow, sql`SELECT a.cents AS availableCents, s.min_transfer_cents AS minTransferCents FROM (${available}) a JOIN referral_settings s ON s.id = 1`],
    committed: ([done]) => rowsOf(done).length > 0,
  });
  const [transfer] = rowsOf<Transfer>(row);
  if (transfer) return transfer;
  const [why] = rowsOf<{ availableCents: number; minTransferCents: number }>(state);
  throw new ApiError(
    'TRANSFER_TOO_SMALL',
    `Available earnings (${formatUsd(why.availableCents)}) are below the minimum transfer of ${formatUsd(why.minTransferCents)}.`,
  );
}
