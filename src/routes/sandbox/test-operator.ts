import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../../env';
import { envelope, ok } from '../../lib/envelope';
import { publishAfterResponse } from '../../middleware/publish-events';
import { RefundBody, RejectBody } from '../../schemas/after-sale';
import { sandboxOwnerActor } from '../../services/accounts/audit-log';
import { resolveClaim, type Resolution } from '../../services/orders/claims';
import { refundOrder } from '../../services/orders/refunds';
import { OperatorRefund, presentOperatorRefund } from '../admin/refunds';
import { Claim, presentClaim } from '../orders/claim-representation';
import { createRouter, errorResponses, IdParams, jsonBody, jsonResponse } from '../openapi';
import { testKeyRoute } from './test-mode';

// Test mode plays the operator's side of after-the-sale on the caller's own sandbox rows, so an integrator can
// receive every event type from code: a claim's resolution (order.item_replaced, order.item_refunded,
// order.claim_rejected) and an operator's refund (order.refunded). The operator's own services run on the sandbox
// database (one round trip), limited to the caller's rows (another user's claim or order is a 404). A test key only.

const tags = ['Test mode'];

const ACTIONS = {
  replace: { summary: 'Play the operator: replace the reported item (test mode)', message: 'Item replaced.' },
  refund: { summary: "Play the operator: refund the reported item's share (test mode)", message: 'Item refunded.' },
  reject: { summary: 'Play the operator: reject the claim with a note (test mode)', message: 'Claim rejected.' },
} as const;

const claimRoute = <A extends keyof typeof ACTIONS>(action: A) =>
  ({
    method: 'post',
    path: `/claims/{id}/${action}`,
    operationId: `${action}TestClaim`,
    tags,
    summary: ACTIONS[action].summary,
    description:
      `What \`POST /admin/claims/{id}/${action}\` does live, on one of the caller's own sandbox claims (reported with ` +
      '`POST /orders/{id}/items/{index}/report` and a test key), with its event. A claim is resolved once: 409 `CLAIM_RESOLVED`.',
    ...testKeyRoute('orders'),
    request: { params: IdParams },
    responses: { 200: jsonResponse(envelope(Claim), 'The resolved claim'), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
  }) as const;

async function resolveOwn(c: Context<AppEnv>, id: number, resolution: Resolution) {
  const { claim } = await resolveClaim(c.var.db, sandboxOwnerActor(c.var.caller), id, resolution, undefined, publishAfterResponse(c));
  return c.json(ok(presentClaim(claim), ACTIONS[resolution.action].message), 200);
}

export const testOperatorRouter = createRouter()
  .openapi(createRoute(claimRoute('replace')), async (c) => resolveOwn(c, c.req.valid('param').id, { action: 'replace' }))
  .openapi(createRoute(claimRoute('refund')), async (c) => resolveOwn(c, c.req.valid('param').id, { action: 'refund' }))
  .openapi(createRoute({ ...claimRoute('reject'), request: { params: IdParams, body: jsonBody(RejectBody) } }), async (c) =>
    resolveOwn(c, c.req.valid('param').id, { action: 'reject', note: c.req.valid('json').note }),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/orders/{id}/refund',
      operationId: 'refundTestOrder',
      tags,
      summary: "Play the operator: refund part or all of one of your sandbox orders (test mode)",
      description:
        "What `POST /admin/orders/{id}/refund` does live, on one of the caller's own sandbox orders: a `refund` transaction of " +
        "`amount` (at most what is left of the order, else 422 `errors.amount`) and the event `order.refunded`.",
      ...testKeyRoute('orders'),
      request: { params: IdParams, body: jsonBody(RefundBody) },
      responses: { 200: jsonResponse(envelope(OperatorRefund), 'Refunded'), ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (c) => {
      const { amount, reason } = c.req.valid('json');
      const { order, refundedCents } = await refundOrder(c.var.db, sandboxOwnerActor(c.var.caller), c.req.valid('param').id, amount, reason, undefined, {
        publish: publishAfterResponse(c),
      });
      return c.json(ok(presentOperatorRefund(order, refundedCents), 'Order refunded.'), 200);
    },
  );
