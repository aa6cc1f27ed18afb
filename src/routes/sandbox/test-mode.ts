import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../../env';
import { envelope, ok } from '../../lib/envelope';
import { centsToAmount } from '../../lib/money';
import { usdAmount } from '../../lib/validation';
import { publishAfterResponse } from '../../middleware/publish-events';
import { resetSandbox } from '../../services/sandbox/reset';
import { settleTestDeposit, type TestOutcome, type TestSettlement } from '../../services/sandbox/deposits';
import { createRouter, errorResponses, IdParams, jsonBody, jsonResponse, needsScope } from '../openapi';
import { requireTestKeyRoute } from '../../middleware/mode';
import type { Scope } from '../../lib/scopes';

/** A test-mode route: its scope, and a test key only (403 TEST_KEY_REQUIRED; a bad key still 401), before its input is read. */
export const testKeyRoute = (scope: Scope) => {
  const scoped = needsScope(scope);
  return { ...scoped, middleware: [scoped.middleware, requireTestKeyRoute] };
};
import { DepositStatus, presentDepositStatus } from '../representations';

// Test mode's own routes (docs/test-mode.md): drive the test gateway and start the sandbox over. A test key only: a
// live key is 403 TEST_KEY_REQUIRED (a bad key still 401), before anything is read.

const tags = ['Test mode'];

const MAX_TEST_PAYMENT_CENTS = 1_000_000;

const PayBody = z.object({
  amount: usdAmount('amount', 1, MAX_TEST_PAYMENT_CENTS)
    .optional()
    .openapi({ description: "USD the test payer pays; default the deposit's amount. Less than 99 % of it: a mismatch, nothing credited", example: 10 }),
});

/** The test gateway's answer: the deposit afterwards, and whether this request credited the wallet. */
const TestSettlementSchema = DepositStatus.extend({
  credited: z.boolean().openapi({ description: 'true only when this request credited the wallet; `message` says why not' }),
}).openapi('TestDepositSettlement');

/** What happened, in words (`message`): whether the payment credited the wallet, and why not. */
function settlementMessage(outcome: TestOutcome, { deposit, credited, changed, late }: TestSettlement): string {
  if (outcome === 'pay') {
    if (credited) return late ? 'paid after expiry: credited' : 'paid: credited';
    return deposit.status === 'paid' ? 'already paid: nothing credited again' : 'under-paid: nothing credited';
  }
  if (changed) return outcome === 'fail' ? 'failed: nothing credited' : 'expired: nothing credited';
  return `already ${deposit.status}: nothing changed`;
}

const settleRoute = (outcome: TestOutcome, summary: string) =>
  createRoute({
    method: 'post',
    path: `/deposits/{id}/${outcome}`,
    operationId: `${outcome}TestDeposit`,
    tags,
    summary,
    ...testKeyRoute('deposits'),
    request: { params: IdParams },
    responses: {
      200: jsonResponse(envelope(TestSettlementSchema), 'The deposit afterwards; `data.credited` and `message` say what this request did'),
      ...errorResponses(401, 403, 404, 422, 429),
    },
  });

const payRoute = createRoute({
  ...settleRoute('pay', 'Pay a test deposit (all of it, or `amount`)'),
  request: { params: IdParams, body: jsonBody(PayBody) },
});

async function settle(c: Context<AppEnv>, outcome: TestOutcome, id: number, amountCents?: number) {
  const settled = await settleTestDeposit(c.var.db, c.var.caller, id, outcome, { amountCents, publish: publishAfterResponse(c) });
  return c.json(ok({ ...presentDepositStatus(settled.deposit), credited: settled.credited }, settlementMessage(outcome, settled)), 200);
}

export const testModeRouter = createRouter()
  .openapi(payRoute, async (c) => settle(c, 'pay', c.req.valid('param').id, c.req.valid('json').amount))
  .openapi(settleRoute('fail', 'Fail a test deposit'), async (c) => settle(c, 'fail', c.req.valid('param').id))
  .openapi(settleRoute('expire', 'Expire a test deposit'), async (c) => settle(c, 'expire', c.req.valid('param').id))
  .openapi(
    createRoute({
      method: 'post',
      path: '/reset',
      operationId: 'resetTestMode',
      tags,
      summary: "Empty the caller's sandbox and put the test money back",
      description: 'Deletes the test orders, deposits, transactions, events and webhook deliveries; keys and webhook endpoints stay.',
      ...testKeyRoute('account'),
      responses: {
        200: jsonResponse(envelope(z.object({ balance: z.number() })), 'The sandbox wallet, back to its test money'),
        ...errorResponses(401, 403, 429),
      },
    }),
    async (c) => {
      const { balanceCents } = await resetSandbox(c.var.db, c.var.caller);
      return c.json(ok({ balance: centsToAmount(balanceCents) }, 'Test mode reset.'), 200);
    },
  );
