import { eq, sql } from 'drizzle-orm';
import { columnsOf, rowJson, rowsOf } from '../db/batch';
import { writeBatch } from '../db/d1';
import { getDb, type Db } from '../db/client';
import { deposits, type DepositRow } from '../db/schema';
import type { Config } from '../env';
import { ApiError, notFound } from '../lib/errors';
import { formatUsd } from '../lib/money';
import { pageWindow, type Page } from '../lib/pagination';
import { addMinutes, isoNow } from '../lib/time';
import { randomBase62 } from '../lib/crypto';
import {
  DEFAULT_CRYPTO_CURRENCY,
  getGateway,
  normaliseGateway,
  type CryptoCurrency,
  type GatewayEvent,
  type GatewayInput,
  type GatewayName,
} from './gateways';
import { readAs, writeAs, type Caller } from './caller';
import { changeRowsWithEvents, eventIdsOf, newEvent, recordEvent, type Publish } from './events';
import { recordClaim, type IdempotencyClaim } from './idempotency';
import { newOperationId, walletMovement } from './ledger';

export interface DepositRequest {
  amountCents: number;
  gateway: GatewayInput;
  cryptoCurrency?: CryptoCurrency;
}

export async function createDeposit(
  d1: Db,
  config: Config,
  caller: Caller,
  request: DepositRequest,
  claim?: IdempotencyClaim,
): Promise<DepositRow> {
  const gateway = getGateway(normaliseGateway(request.gateway), config);
  const now = isoNow();
  const cryptoCurrency = gateway.isCrypto ? (request.cryptoCurrency ?? DEFAULT_CRYPTO_CURRENCY) : null;
  // Generated before the batch: the batch's statements find the new deposit by it, and so does a retry after a fault.
  const reference = `dep_${randomBase62(24)}`;
  const depositId = sql`(SELECT id FROM deposits WHERE reference = ${reference})`;
  const invoice = gateway.invoiceColumns(depositId);
  const [created] = await writeAs(d1, caller, {
    writes: [
      sql`INSERT INTO deposits (user_id, amount_cents, gateway, crypto_currency, status, expires_at, created_at, updated_at, reference)
          SELECT ${caller.userId}, ${request.amountCents}, ${gateway.name}, ${cryptoCurrency}, 'pending',
                 ${addMinutes(now, config.depositTtlMinutes)}, ${now}, ${now}, ${reference}
          WHERE ${caller.userId} IS NOT NULL`,
      sql`UPDATE deposits SET payment_url = ${invoice.paymentUrl}, external_id = ${invoice.externalId} WHERE reference = ${reference}`,
      ...(claim ? recordClaim(caller, claim, sql`SELECT id, ${rowJson(deposits)} AS snapshot FROM deposits WHERE reference = ${reference}`) : []),
    ],
    reads: [sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE reference = ${reference}`],
    committed: ([deposit]) => rowsOf(deposit).length > 0,
  });
  return rowsOf<DepositRow>(created)[0];
}

/**
 * A pending deposit past its expiry reads as expired at once; the scheduled job writes the status later. Reads stay
 * reads (no write on the replica-friendly path), and a late payment is still accepted either way.
 */
const asOfNow = (deposit: DepositRow, now = isoNow()): DepositRow =>
  deposit.status === 'pending' && deposit.expiresAt <= now ? { ...deposit, status: 'expired' } : deposit;

export async function listDeposits(d1: Db, caller: Caller, page: Page) {
  const { limit, offset } = pageWindow(page);
  const [rows, total] = await readAs(d1, caller, [
    sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE user_id = ${caller.userId} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM deposits WHERE user_id = ${caller.userId}`,
  ]);
  const now = isoNow();
  return { rows: rowsOf<DepositRow>(rows).map((row) => asOfNow(row, now)), total: rowsOf<{ total: number }>(total)[0].total };
}

export async function getDeposit(d1: Db, caller: Caller, depositId: number): Promise<DepositRow> {
  const [found] = await readAs(d1, caller, [
    sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE id = ${depositId} AND user_id = ${caller.userId}`,
  ]);
  const [deposit] = rowsOf<DepositRow>(found);
  if (!deposit) throw notFound('Deposit');
  return asOfNow(deposit);
}

/**
 * Credit a deposit exactly once: one batch whose ledger row is written only while the deposit is not yet paid and
 * has no deposit transaction (a partial unique index backs this up), then the balance by that row's amount, then the
 * deposit marked paid. A replay finds it paid and changes nothing. A payment for an expired deposit is still credited
 * (the money arrived) and its ledger description says so.
 */
export async function creditDeposit(
  d1: Db,
  deposit: DepositRow,
  transactionId: string,
  publish?: Publish,
): Promise<{ deposit: DepositRow; credited: boolean }> {
  const now = isoNow();
  const operationId = newOperationId();
  const creditWritten = sql`EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${operationId})`;
  const event = newEvent('deposit.paid', now);
  const [read, credit] = (
    await writeBatch(d1, {
      writes: [
        ...walletMovement({
          userId: deposit.userId,
          type: 'deposit',
          operationId,
          now,
          source: sql`
            SELECT d.amount_cents AS amount,
                   'Deposit #' || d.id || ' via ' || d.gateway
                     || CASE WHEN d.status = 'expired' OR d.expires_at <= ${now} THEN ' (paid after expiry)' ELSE '' END AS description,
                   NULL AS order_id, d.id AS deposit_id
            FROM deposits d
            WHERE d.id = ${deposit.id} AND d.status <> 'paid'
              AND NOT EXISTS (SELECT 1 FROM wallet_transactions t WHERE t.deposit_id = d.id AND t.type = 'deposit')`,
        }),
        sql`UPDATE deposits SET status = 'paid', paid_at = ${now}, transaction_id = ${transactionId}, updated_at = ${now}
            WHERE id = ${deposit.id} AND ${creditWritten}`,
        recordEvent(event, deposits, sql`id = ${deposit.id} AND ${creditWritten}`),
      ],
      reads: [sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE id = ${deposit.id}`, sql`SELECT 1 FROM wallet_transactions WHERE operation_id = ${operationId}`],
      // Paid by this batch or by another one: either way the credit exists once and a re-run would change nothing.
      committed: ([row]) => rowsOf<DepositRow>(row)[0]?.status === 'paid',
    })
  ).reads;
  if (rowsOf(credit).length > 0) publish?.([event.id]);
  return { deposit: rowsOf<DepositRow>(read)[0], credited: rowsOf(credit).length > 0 };
}

/** A gateway's failed/expired verdict closes a pending deposit without credit; a paid one is never reopened. */
async function closeDeposit(d1: Db, deposit: DepositRow, status: 'failed' | 'expired', publish?: Publish): Promise<DepositRow> {
  const now = isoNow();
  const event = newEvent(`deposit.${status}`, now);
  const { reads } = await writeBatch(d1, {
    writes: [
      sql`UPDATE deposits SET status = ${status}, updated_at = ${now} WHERE id = ${deposit.id} AND status = 'pending'`,
      recordEvent(event, deposits, sql`id = ${deposit.id} AND status = ${status} AND updated_at = ${now}`),
    ],
    reads: [sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE id = ${deposit.id}`, sql`SELECT id FROM events WHERE id = ${event.id}`],
    committed: ([row]) => rowsOf<DepositRow>(row)[0]?.status !== 'pending',
  });
  publish?.(eventIdsOf(reads[1]));
  return rowsOf<DepositRow>(reads[0])[0];
}

export async function findDeposit(d1: Db, depositId: number): Promise<DepositRow> {
  const [deposit] = await getDb(d1).select().from(deposits).where(eq(deposits.id, depositId));
  if (!deposit) throw notFound('Deposit');
  return deposit;
}

/** Apply a verified gateway event. A gateway only ever acts on its own deposits. */
export async function applyGatewayEvent(d1: Db, gateway: GatewayName, event: GatewayEvent, publish?: Publish) {
  const deposit = await findDeposit(d1, event.depositId);
  if (deposit.gateway !== gateway) throw notFound('Deposit');
  if (event.status !== 'paid') return { deposit: await closeDeposit(d1, deposit, event.status, publish), credited: false };
  // The amount of a deposit never changes, so comparing it outside the batch is safe.
  if (event.amountCents !== deposit.amountCents) {
    throw new ApiError('AMOUNT_MISMATCH', `Paid amount ${formatUsd(event.amountCents)} does not match the deposit amount ${formatUsd(deposit.amountCents)}.`);
  }
  return creditDeposit(d1, deposit, event.transactionId, publish);
}

/** Operator confirmation of a payment seen outside the webhook: the same single credit path. */
export async function markDepositPaid(d1: Db, depositId: number, publish?: Publish) {
  return creditDeposit(d1, await findDeposit(d1, depositId), `manual-${depositId}`, publish);
}

/**
 * Scheduled job: pending deposits past `expires_at` become expired, each with its `deposit.expired` event, a bounded
 * batch per run.
 */
export async function expireDeposits(d1: Db, now: string, limit: number): Promise<number> {
  return changeRowsWithEvents(d1, {
    type: 'deposit.expired',
    table: deposits,
    candidates: sql`SELECT * FROM deposits WHERE status = 'pending' AND expires_at <= ${now} ORDER BY expires_at LIMIT ${limit}`,
    set: { status: 'expired', updatedAt: now },
    limit,
    now,
  });
}
