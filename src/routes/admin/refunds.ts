import { createRoute, z } from '@hono/zod-openapi';
import type { OrderRow } from '../../db/schema';
import { envelope, ok } from '../../lib/envelope';
import { centsToAmount } from '../../lib/money';
import { idempotent } from '../../middleware/idempotency';
import { publishAfterResponse } from '../../middleware/publish-events';
import { mailFor } from '../../middleware/send-emails';
import { RefundBody } from '../../schemas/after-sale';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { OPERATOR } from '../../services/idempotency';
import { refundOrder } from '../../services/orders/refunds';
import { createRouter, errorResponses, idempotencyKeyParameter, IdParams, jsonBody, jsonResponse } from '../openapi';
import { Order, presentOrder } from '../representations';

// POST /admin/orders/{id}/refund: the operator refunds part or all of an order that is not cancelled.

export const OperatorRefund = z
  .object({ refunded_amount: z.number().openapi({ description: 'USD refunded by this request' }), order: z.object({ ...Order.shape, user_id: z.number().int() }) })
  .openapi('OperatorRefund');

export const presentOperatorRefund = (order: OrderRow, cents: number) => ({
  refunded_amount: centsToAmount(cents),
  order: { ...presentOrder(order), user_id: order.userId },
});

export const adminRefundsRouter = createRouter().openapi(
  createRoute({
    method: 'post',
    path: '/orders/{id}/refund',
    operationId: 'refundOrder',
    tags: ['Admin'],
    summary: 'Refund part or all of an order that is not cancelled',
    description:
      'A `refund` transaction of `amount` to the buyer\'s wallet, tied to the order (pending or completed, final sale too): ' +
      "`amount` must be more than 0 and at most the order's `total_amount` less its `refunded_amount` (422 `errors.amount` " +
      'otherwise; a cancelled order is refunded in full already). The items stay the buyer\'s; a later cancellation refunds ' +
      'only the rest. Audited (`order.refunded`); writes the event `order.refunded` (`data.object` the order, `data.amount` and ' +
      '`data.reason` of this refund) and emails the buyer (`order_refunded`: the amount and the reason).',
    security: [{ AdminBearer: [] }],
    parameters: [idempotencyKeyParameter],
    request: { params: IdParams, body: jsonBody(RefundBody) },
    responses: { 200: jsonResponse(envelope(OperatorRefund), 'Refunded'), ...errorResponses(401, 404, 422) },
  }),
  async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const refunded = (order: OrderRow, cents: number) => ({ status: 200 as const, body: ok(presentOperatorRefund(order, cents), 'Order refunded.') });
    return idempotent(
      c,
      { order_id: id, ...body },
      async (claim) => {
        const { order, refundedCents } = await refundOrder(c.var.db, ADMIN_TOKEN_ACTOR, id, body.amount, body.reason, claim, {
          mail: mailFor(c),
          publish: publishAfterResponse(c),
        });
        return refunded(order, refundedCents);
      },
      {
        owner: OPERATOR,
        render: (snapshot) => {
          const order = snapshot as OrderRow & { refundCents: number };
          return refunded(order, order.refundCents);
        },
      },
    );
  },
);
