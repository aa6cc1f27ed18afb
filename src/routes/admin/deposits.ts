import { createRoute, z } from '@hono/zod-openapi';
import { GATEWAY_OUTCOMES, type DepositRow } from '../../db/schema';
import { readConfig } from '../../env';
import { envelope, ok } from '../../lib/envelope';
import { createRouter, errorResponses, idempotencyKeyParameter, IdParams, jsonBody, jsonResponse } from '../openapi';
import { idempotent } from '../../middleware/idempotency';
import { publishAfterResponse } from '../../middleware/publish-events';
import { RefreshDepositBody, DepositsQuery } from '../../schemas/operator';
import { markDepositPaid, type CreditSnapshot } from '../../services/payments/deposits';
import { refreshDeposit, type LookupResult } from '../../services/payments/vendor-notifications';
import { OPERATOR } from '../../services/idempotency';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { Deposit, DepositStatus, lastCheckedAt, presentDeposit, presentDepositStatus } from '../representations';
import { mailFor } from '../../middleware/send-emails';
import { paged, pagedEnvelope } from '../../lib/pagination';
import { queryPlain } from '../../services/caller';
import { operatorDepositsQuery, type OperatorDeposit } from '../../services/operator/deposits';

// Deposits for the operator: every user's deposits, confirming one as paid, and asking its payment provider what
// happened to it.

const security = [{ AdminBearer: [] }];
// Every admin POST/PATCH takes an Idempotency-Key in the operator's own key namespace.
const parameters = [idempotencyKeyParameter];
const asOperator = { owner: OPERATOR } as const;
const tags = ['Admin'];

const OperatorDepositSchema = z.object({
  ...Deposit.shape,
  user_id: z.number().int(),
  reference: z.string().nullable().openapi({ description: 'the deposit\'s own reference, generated before its batch (null for deposits made before references existed)' }),
  last_checked_at: lastCheckedAt,
}).openapi('OperatorDeposit');
const presentOperatorDeposit = (d: DepositRow | OperatorDeposit) => ({ ...presentDeposit(d), user_id: d.userId, reference: d.reference, last_checked_at: d.lastCheckedAt });

export const adminDepositsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'post',
      path: '/deposits/{id}/mark-paid',
      operationId: 'markDepositPaid',
      tags,
      summary: 'Confirm a deposit as paid (credits the wallet exactly once, like the webhook)',
      security,
      parameters,
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(DepositStatus), 'The deposit, paid'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const confirmed = ({ deposit, credited }: { deposit: DepositRow; credited: boolean | CreditSnapshot['credited'] }) => ({
        status: 200 as const,
        body: ok(presentDepositStatus(deposit), credited ? 'Deposit credited to the wallet.' : 'Deposit was already paid.'),
      });
      return idempotent(
        c,
        {},
        async (claim) => confirmed(await markDepositPaid(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, claim, publishAfterResponse(c), mailFor(c))),
        { ...asOperator, render: (snapshot) => confirmed(snapshot as CreditSnapshot) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/deposits',
      operationId: 'listAllDeposits',
      tags,
      summary: "Every user's deposits, newest first; `from`/`to`: UTC days, inclusive",
      security,
      request: { query: DepositsQuery },
      responses: { 200: jsonResponse(pagedEnvelope(OperatorDepositSchema), 'A page of deposits'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const { status, gateway, user_id: userId, from, to, ...page } = c.req.valid('query');
      const [{ rows, total }] = await queryPlain(c.var.db, [operatorDepositsQuery({ status, gateway, userId, from, to }, page)]);
      return c.json(paged(rows.map(presentOperatorDeposit), page, total), 200);
    },
  );

const RefreshedDeposit = z
  .object({
    deposit: Deposit.extend({
      reference: z.string().nullable(),
      last_checked_at: lastCheckedAt,
    }),
    vendor_status: z.string().nullable().openapi({ description: "the vendor's status as received; null when it has none yet" }),
    outcome: z.enum(GATEWAY_OUTCOMES).openapi({ description: '`duplicate`: already credited (or closed); `in_progress`: nothing to apply yet' }),
  })
  .openapi('RefreshedDeposit');

const presentRefresh = ({ deposit, vendorStatus, outcome }: LookupResult) => ({
  deposit: { ...presentDeposit(deposit), reference: deposit.reference, last_checked_at: deposit.lastCheckedAt },
  vendor_status: vendorStatus,
  outcome,
});

adminDepositsRouter.openapi(
  createRoute({
    method: 'post',
    path: '/deposits/{id}/refresh',
    operationId: 'refreshDeposit',
    tags,
    summary: "Ask the deposit's payment provider what happened to it, and apply the answer",
    description:
      "Asks the vendor's own API (10 s at most) and applies its answer as a verified notification with that status " +
      'would be applied: paid credits exactly once, a paid amount under the deposit less 1 % is `amount_mismatch`. The ' +
      'vendor asked is the one the deposit was made with, even after its slot changed provider. A deposit of a generic ' +
      'slot, or whose provider is no longer configured, has no vendor to ask: 422. `payment_id` (NOWPayments only, else ' +
      "422) is used for this lookup and stored when the vendor's answer names this deposit; another deposit's payment: " +
      '422, nothing changes. The vendor cannot be reached or answers about another deposit: 503 `GATEWAY_UNAVAILABLE`, ' +
      'nothing changes. A refresh that credits or closes the deposit is on the audit log (`deposit.refreshed`).',
    security,
    parameters,
    request: { params: IdParams, body: jsonBody(RefreshDepositBody) },
    responses: { 200: jsonResponse(envelope(RefreshedDeposit), 'The deposit as after the answer'), ...errorResponses(401, 404, 422) },
  }),
  async (c) => {
    const answered = (result: LookupResult) => ({ status: 200 as const, body: ok(presentRefresh(result)) });
    const body = c.req.valid('json');
    const options = { paymentId: body.payment_id, actor: ADMIN_TOKEN_ACTOR, mail: mailFor(c) };
    return idempotent(
      c,
      body,
      async (claim) => answered(await refreshDeposit(c.var.db, readConfig(c.env), c.req.valid('param').id, options, claim, publishAfterResponse(c))),
      { ...asOperator, render: (snapshot) => answered(snapshot as LookupResult) },
    );
  },
);
