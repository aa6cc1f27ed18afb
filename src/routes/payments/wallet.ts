import { createRoute, z } from '@hono/zod-openapi';
import { publicBaseUrl } from '../../lib/public-base-url';
import { envelope, ok } from '../../lib/envelope';
import { centsToAmount } from '../../lib/money';
import type { DepositRow } from '../../db/schema';
import { idempotent } from '../../middleware/idempotency';
import { vendorInvoiceThrottle } from '../../middleware/rate-limit';
import { createRouter, errorResponses, idempotencyKeyParameter, IdParams, idLinks, jsonBody, jsonResponse, needsScope } from '../openapi';
import { paged, pagedEnvelope, PaginationQuery } from '../../lib/pagination';
import { DepositBody } from '../../schemas/wallet';
import { createDeposit, getDeposit, listDeposits } from '../../services/payments/deposits';
import { availableGateways, CRYPTO_CURRENCIES, GATEWAYS } from '../../services/payments/gateways';
import { readAs } from '../../services/caller';
import { getBalanceCents, listTransactions } from '../../services/payments/wallet';
import { Deposit, depositOrderFields, DepositStatus, presentDeposit, presentDepositStatus, presentTransaction, Transaction } from '../representations';
import { mailFor } from '../../middleware/send-emails';
import { modeConfig } from '../../middleware/mode';

const CreatedDeposit = z
  .object({
    deposit_id: z.number().int(),
    amount: z.number(),
    payment_method: z.string(),
    crypto_currency: z.string().nullable(),
    status: z.enum(['pending', 'paid', 'failed', 'expired']).openapi({ description: "'pending' when created" }),
    payment_url: z.string().openapi({ format: 'uri' }),
    expires_at: z.string().openapi({ format: 'date-time' }),
    ...depositOrderFields,
  })
  .openapi('CreatedDeposit');

const GatewayOffer = z
  .object({
    gateway: z.enum(GATEWAYS),
    kind: z.enum(['crypto', 'usd']).openapi({ description: '`crypto`: the buyer pays in crypto; `usd`: by card, in USD' }),
    provider: z.enum(['generic', 'nowpayments', 'cryptomus', 'btcpay', 'stripe', 'test']),
    crypto_currencies: z.array(z.enum(CRYPTO_CURRENCIES)).openapi({ description: 'values `crypto_currency` takes on this slot; empty for `usd`' }),
  })
  .openapi('GatewayOffer');

const tags = ['Wallet'];

export const walletRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/balance',
      operationId: 'getBalance',
      tags,
      summary: 'Wallet balance',
      ...needsScope('read'),
      responses: {
        200: jsonResponse(envelope(z.object({ balance: z.number().min(0), currency: z.literal('USD') })), 'The balance'),
        ...errorResponses(401, 429),
      },
    }),
    async (c) => {
      const balance = centsToAmount(await getBalanceCents(c.var.db, c.var.caller));
      return c.json(ok({ balance, currency: 'USD' as const }), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/transactions',
      operationId: 'listTransactions',
      tags,
      summary: 'Wallet ledger, newest first',
      ...needsScope('read'),
      request: { query: PaginationQuery },
      responses: { 200: jsonResponse(pagedEnvelope(Transaction), 'A page of transactions'), ...errorResponses(401, 422, 429) },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const { rows, total } = await listTransactions(c.var.db, c.var.caller, page);
      return c.json(paged(rows.map(presentTransaction), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/gateways',
      operationId: 'listGateways',
      tags,
      summary: 'The gateway slots that take deposits now, in order',
      description: 'A slot whose provider is not fully configured is not listed, and a deposit on it is a 422 on `gateway`.',
      ...needsScope('read'),
      responses: { 200: jsonResponse(envelope(z.array(GatewayOffer)), 'The available gateways'), ...errorResponses(401, 429) },
    }),
    async (c) => {
      await readAs(c.var.db, c.var.caller, []);
      return c.json(ok(availableGateways(modeConfig(c))), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/deposit',
      operationId: 'createDeposit',
      tags,
      summary: 'Create a deposit through a payment gateway',
      description:
        'With a real payment provider on the slot, the invoice is created at the vendor first (at most 10 s) and ' +
        "`payment_url` is the vendor's page. The vendor unreachable or failing: 503 `GATEWAY_UNAVAILABLE` with " +
        "`Retry-After`; the vendor refusing the invoice: 422 `GATEWAY_REJECTED` with its reason. Either way nothing is " +
        'stored and the `Idempotency-Key` stays free. A slot that is not available: 422 on `gateway`. With `order` ' +
        '(scopes `deposits` and `orders`), the deposit pays for that order: the order must be one a purchase would ' +
        'make now at exactly `expected_total` (else the purchase\'s error, nothing stored), and when the deposit is ' +
        'credited, by whatever path, the same step buys it with the wallet at that total. If it cannot be bought then, ' +
        'the credit stands, nothing is bought, and the deposit\'s `order_error` says why; `order_id` names the order bought.',
      ...needsScope('deposits'),
      parameters: [idempotencyKeyParameter],
      request: { body: jsonBody(DepositBody) },
      responses: {
        200: jsonResponse(
          envelope(CreatedDeposit),
          'Pending deposit; pay at payment_url',
          idLinks('/data/deposit_id', { getDepositStatus: 'id', markDepositPaid: 'id', getCheckoutPage: 'deposit_id' }),
        ),
        ...errorResponses(400, 401, 403, 404, 409, 422, 429),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const created = (deposit: DepositRow) => {
        const d = presentDeposit(deposit);
        const data = {
          deposit_id: d.id,
          amount: d.amount,
          payment_method: d.payment_method,
          crypto_currency: d.crypto_currency,
          status: d.status,
          payment_url: d.payment_url ?? '',
          expires_at: d.expires_at,
          order_id: d.order_id,
          order_error: d.order_error,
        };
        return { status: 200 as const, body: ok(data, 'Deposit created. Complete the payment at payment_url.') };
      };
      // Paying for an order is also buying: the key needs the `orders` scope too.
      if (body.order) c.var.caller.alsoScopes = ['orders'];
      const order = body.order && {
        productId: body.order.product_id,
        quantity: body.order.quantity,
        coupon: body.order.coupon ?? null,
        expectedTotalCents: body.order.expected_total,
      };
      const request = {
        amountCents: body.amount,
        gateway: body.gateway,
        cryptoCurrency: body.crypto_currency,
        origin: publicBaseUrl(c.env),
        beforeVendorCall: vendorInvoiceThrottle(c),
        order,
      };
      return idempotent(
        c,
        body,
        async (claim) => created(await createDeposit(c.var.db, modeConfig(c), c.var.caller, request, claim, mailFor(c))),
        { render: (snapshot) => created(snapshot as DepositRow) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/deposits',
      operationId: 'listDeposits',
      tags,
      summary: 'List deposits, newest first',
      ...needsScope('read'),
      request: { query: PaginationQuery },
      responses: { 200: jsonResponse(pagedEnvelope(Deposit), 'A page of deposits'), ...errorResponses(401, 422, 429) },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const { rows, total } = await listDeposits(c.var.db, c.var.caller, page);
      return c.json(paged(rows.map(presentDeposit), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/deposits/{id}/status',
      operationId: 'getDepositStatus',
      tags,
      summary: 'Status of one deposit',
      ...needsScope('read'),
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(DepositStatus), 'The deposit'), ...errorResponses(401, 404, 422, 429) },
    }),
    async (c) => {
      const deposit = await getDeposit(c.var.db, c.var.caller, c.req.valid('param').id);
      return c.json(ok(presentDepositStatus(deposit)), 200);
    },
  );
