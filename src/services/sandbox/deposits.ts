import type { Db } from '../../db/client';
import type { DepositRow } from '../../db/schema';
import { randomBase62 } from '../../lib/crypto';
import { fieldError } from '../../lib/errors';
import { leastPaidCents } from '../../lib/money';
import type { Caller } from '../caller';
import { closeDeposit, creditDeposit, getDeposit } from '../payments/deposits';
import type { Publish } from '../events/log';
import { logOnly, receiveEvent } from '../payments/gateway-events';
import { GATEWAYS } from '../payments/gateways/slots';
import { TEST_PROVIDER } from '../payments/gateways/test';

// Driving the test gateway (src/services/payments/gateways/test.ts): what the tester chose for a sandbox deposit, reported
// through the very paths a real vendor's report takes.

export type TestOutcome = 'pay' | 'fail' | 'expire';

/**
 * Apply what the tester chose for one of the caller's deposits: `pay` (the deposit's amount unless `amountCents` says
 * another), `fail` or `expire`. Answers the deposit as it is afterwards. 404 for a deposit that is not the caller's.
 */
export async function settleTestDeposit(
  d1: Db,
  caller: Caller,
  depositId: number,
  outcome: TestOutcome,
  { amountCents, publish }: { amountCents?: number; publish?: Publish } = {},
): Promise<DepositRow> {
  const deposit = await getDeposit(d1, caller, depositId);
  const gateway = GATEWAYS.find((name) => name === deposit.gateway);
  if (deposit.provider !== TEST_PROVIDER || !gateway) throw fieldError('id', `Deposit ${depositId} was not made with the test gateway.`);
  const transactionId = `test_${randomBase62(16)}`;
  const status = outcome === 'pay' ? 'paid' : outcome === 'fail' ? 'failed' : 'expired';
  const paid = amountCents ?? deposit.amountCents;
  const received = receiveEvent(gateway, { depositId, status, amountCents: outcome === 'pay' ? paid : null, transactionId }, 'notification');
  if (status !== 'paid') return (await closeDeposit(d1, deposit, status, received, publish)).deposit;
  if (paid < leastPaidCents(deposit.amountCents)) {
    await logOnly(d1, received, 'amount_mismatch');
    return deposit;
  }
  return (await creditDeposit(d1, deposit, transactionId, { received, publish })).deposit;
}
