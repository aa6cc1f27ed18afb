import { and, eq, inArray, sql } from 'drizzle-orm';
import { getDb, type Db } from '../../db/client';
import { deposits, type DepositRow } from '../../db/schema';
import { randomBase62 } from '../../lib/crypto';
import { fieldError, notFound } from '../../lib/errors';
import type { Caller } from '../caller';
import { asOfNow, closeDeposit, creditDeposit, type UnreadDeposit } from '../payments/deposits';
import type { Publish } from '../events/log';
import { receiveEvent } from '../payments/gateway-events';
import { GATEWAYS, type GatewayName } from '../payments/gateways/slots';
import { TEST_PAY_TOKEN, TEST_PROVIDER, testPayExternalId } from '../payments/gateways/test';

// Driving the test gateway (src/services/payments/gateways/test.ts): what the tester chose for a sandbox deposit,
// reported through the very paths a real vendor's report takes, in ONE batch (a test key's request is one round trip,
// to the sandbox): the deposit is not read first. The batch proves the key, reads the deposit's user, gateway, amount
// and order itself, and changes nothing unless the deposit is the caller's and the test gateway's.

export type TestOutcome = 'pay' | 'fail' | 'expire';

/** What a test payment did: the deposit afterwards, whether this request credited it, and whether it changed it at all. */
export interface TestSettlement {
  deposit: DepositRow;
  credited: boolean;
  changed: boolean;
  /** Credited after the deposit's expiry. */
  late: boolean;
}

/**
 * Apply what the tester chose for one of the caller's deposits: `pay` (the deposit's amount unless `amountCents` says
 * another; under 99 % of it is an `amount_mismatch` in the gateway log and credits nothing), `fail` or `expire`.
 * Answers the deposit as it is afterwards and what this request did. 404 for a deposit that is not the caller's, 422
 * for one of another gateway.
 */
export async function settleTestDeposit(
  d1: Db,
  caller: Caller,
  depositId: number,
  outcome: TestOutcome,
  { amountCents, publish }: { amountCents?: number; publish?: Publish } = {},
): Promise<TestSettlement> {
  const column = (name: string) => sql`(SELECT ${sql.raw(name)} FROM deposits WHERE id = ${depositId})`;
  const owned = sql`EXISTS (SELECT 1 FROM deposits WHERE id = ${depositId} AND user_id = ${caller.userId} AND provider = ${TEST_PROVIDER})`;
  const paid = amountCents ?? null;
  // leastPaidCents (src/lib/money.ts) in SQL: 99 % of the deposit's amount, rounded down to the cent.
  const amount = column('amount_cents');
  const enough = sql`(coalesce(${paid}, ${amount}) >= (${amount} * 99 - (${amount} * 99) % 100) / 100)`;
  const transactionId = `test_${randomBase62(16)}`;
  const status = outcome === 'pay' ? 'paid' : outcome === 'fail' ? 'failed' : 'expired';
  // The log row's gateway and amount are the deposit's own, read by the batch (the builders bind them into SQL only).
  const received = receiveEvent(
    column('gateway') as unknown as GatewayName,
    { depositId, status, amountCents: outcome === 'pay' ? (sql`coalesce(${paid}, ${amount})` as unknown as number) : null, transactionId },
    'notification',
  );
  const unread: UnreadDeposit = { id: depositId, caller, owned, enough };
  const { deposit, changed, late } = status === 'paid'
    ? await creditDeposit(d1, unread, transactionId, { received, publish }).then((r) => ({ ...r, changed: r.credited, late: r.lateCredit }))
    : await closeDeposit(d1, { id: depositId }, status, received, publish, undefined, unread).then((r) => ({ ...r, changed: r.closed, late: false }));
  // Explained from the batch's own read of the deposit (a batch settled after a fault committed, so it was owned).
  if (!deposit || (caller.proved && deposit.userId !== caller.proved.userId)) throw notFound('Deposit');
  if (deposit.provider !== TEST_PROVIDER) throw fieldError('id', `Deposit ${depositId} was not made with the test gateway.`);
  return { deposit: asOfNow(deposit), credited: status === 'paid' && changed, changed, late };
}


/**
 * The test deposit whose payment page has this token (one read: the slots lead the index deposits_gateway_external),
 * or 404: a malformed or unknown token, a deposit id, another gateway's deposit.
 */
export async function findTestDeposit(d1: Db, token: string): Promise<DepositRow> {
  if (!TEST_PAY_TOKEN.test(token)) throw notFound('Deposit');
  const [deposit] = await getDb(d1)
    .select()
    .from(deposits)
    .where(and(inArray(deposits.gateway, [...GATEWAYS]), eq(deposits.externalId, testPayExternalId(token)), eq(deposits.provider, TEST_PROVIDER)))
    .limit(1);
  if (!deposit) throw notFound('Deposit');
  return deposit;
}
