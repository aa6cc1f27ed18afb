import { createRoute, z } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { centsToAmount } from '../../lib/money';
import { paged, pagedEnvelope, PaginationQuery } from '../../lib/pagination';
import { publicBaseUrl } from '../../lib/public-base-url';
import { isoNow } from '../../lib/time';
import { idempotent } from '../../middleware/idempotency';
import { queryAs } from '../../services/caller';
import { earningsQuery, summaryQuery, type EarningView, type ReferralSummary } from '../../services/referrals/account';
import { transferEarnings, type Transfer } from '../../services/referrals/transfers';
import { referralLink } from '../../services/referrals/codes';
import { createRouter, errorResponses, idempotencyKeyParameter, jsonResponse, needsScope } from '../openapi';

// A referrer's side of the programme (docs/referrals.md): the code and link, the balances, the earnings, and the
// transfer of what is available into the wallet.

const money = (description: string) => z.number().openapi({ description: `USD, at most 2 decimals: ${description}` });
const timestamp = z.string().openapi({ format: 'date-time' });

const Referral = z
  .object({
    code: z.string().openapi({ example: '3FA29C01B7D54E10' }),
    link: z.string().openapi({ format: 'uri', description: '<PUBLIC_BASE_URL>/r/<code>: remembers the code for 30 days and opens the shop' }),
    percent: z.number().int().openapi({ description: "the shop's percent (a product may set its own); 0 = the programme is off" }),
    pending: money('earned, still held'),
    available: money('what a transfer would move now (may be negative after a refund of an earning already moved)'),
    transferred: money('moved into the wallet so far'),
  })
  .openapi('Referral');

const Earning = z
  .object({
    id: z.number().int(),
    order_id: z.number().int(),
    order_number: z.string(),
    kind: z.enum(['earning', 'offset']).openapi({ description: '`offset`: a refund took back part of an earning already moved (negative)' }),
    earned: money('what the order earned (an offset: what it took back)'),
    amount: money('what it is worth now (after refunds while held; 0 once reversed)'),
    status: z.enum(['pending', 'available', 'transferred', 'reversed']),
    available_at: timestamp,
    created_at: timestamp,
  })
  .openapi('ReferralEarning');

const TransferSchema = z
  .object({
    amount: money('moved into the wallet'),
    transaction_id: z.number().int().openapi({ description: 'the `commission` wallet transaction' }),
    balance: money('the wallet balance after it'),
  })
  .openapi('ReferralTransfer');

const presentEarning = (e: EarningView) => ({
  id: e.id,
  order_id: e.orderId,
  order_number: e.orderNumber,
  kind: e.kind,
  earned: centsToAmount(e.earnedCents),
  amount: centsToAmount(e.amountCents),
  status: e.status,
  available_at: e.availableAt,
  created_at: e.createdAt,
});

const presentReferral = (s: ReferralSummary, origin: string) => ({
  code: s.code,
  link: referralLink(origin, s.code),
  percent: s.percent,
  pending: centsToAmount(s.pendingCents),
  available: centsToAmount(s.availableCents),
  transferred: centsToAmount(s.transferredCents),
});

const presentTransfer = (t: Transfer) => ({ amount: centsToAmount(t.amountCents), transaction_id: t.transactionId, balance: centsToAmount(t.balanceCents) });

const tags = ['Referrals'];

export const referralRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/referral',
      operationId: 'getReferral',
      tags,
      summary: 'Your referral code, link and balances',
      ...needsScope('read'),
      responses: { 200: jsonResponse(envelope(Referral), 'The referral account'), ...errorResponses(401, 429) },
    }),
    async (c) => {
      const [summary] = await queryAs(c.var.db, c.var.caller, [summaryQuery(c.var.caller.userId, isoNow())]);
      return c.json(ok(presentReferral(summary, publicBaseUrl(c.env) ?? new URL(c.req.url).origin)), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/referral/earnings',
      operationId: 'listReferralEarnings',
      tags,
      summary: 'Your referral earnings, newest first',
      ...needsScope('read'),
      request: { query: PaginationQuery },
      responses: { 200: jsonResponse(pagedEnvelope(Earning), 'A page of earnings'), ...errorResponses(401, 422, 429) },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const [{ rows, total }] = await queryAs(c.var.db, c.var.caller, [earningsQuery(c.var.caller, page, isoNow())]);
      return c.json(paged(rows.map(presentEarning), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/referral/transfer',
      operationId: 'transferReferralEarnings',
      tags,
      summary: 'Move every available earning into the wallet',
      description:
        'One `commission` wallet transaction of everything available now (offsets included), when it is at least the ' +
        "shop's `min_transfer`; else 400 `TRANSFER_TOO_SMALL` and nothing moves. Concurrent transfers move each earning once.",
      ...needsScope('deposits'),
      parameters: [idempotencyKeyParameter],
      responses: { 200: jsonResponse(envelope(TransferSchema), 'Moved into the wallet'), ...errorResponses(400, 401, 403, 422, 429) },
    }),
    async (c) => {
      const moved = (t: Transfer) => ({ status: 200 as const, body: ok(presentTransfer(t), 'Referral earnings moved to the wallet.') });
      return idempotent(c, {}, async (claim) => moved(await transferEarnings(c.var.db, c.var.caller, claim)), {
        render: (snapshot) => moved(snapshot as Transfer),
      });
    },
  );
