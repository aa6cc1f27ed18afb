import { mailFor } from '../../middleware/send-emails';
import { createRoute } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { ItemIndex, ReportBody } from '../../schemas/after-sale';
import { reportItem } from '../../services/orders/claims';
import { Claim, presentClaim } from './claim-representation';
import { createRouter, errorResponses, jsonBody, jsonResponse, needsScope, pathId } from '../openapi';

const ItemParams = ItemIndex.extend({ id: pathId('id') });

// A buyer's report of a delivered item within its product's warranty (mounted under /orders, behind the API key).

export const orderClaimsRouter = createRouter().openapi(
  createRoute({
    method: 'post',
    path: '/{id}/items/{index}/report',
    operationId: 'reportOrderItem',
    tags: ['Orders'],
    summary: 'Report a problem with a delivered item, within its product\'s warranty',
    description:
      'Opens a claim on the item at `index` (0-based, into the order\'s `stock_items`) while the order is within its ' +
      "product's `warranty_hours` of the purchase; the shop replaces the item, refunds its share or rejects the claim " +
      '(`GET /orders/{id}` shows the claims). No warranty, past it, or a cancelled order → 422 `WARRANTY_EXPIRED`; an item ' +
      'already reported → 409 `ALREADY_REPORTED`; an index outside the order → 422 `errors.index`.',
    ...needsScope('orders'),
    request: { params: ItemParams, body: jsonBody(ReportBody) },
    responses: { 201: jsonResponse(envelope(Claim), 'The open claim'), ...errorResponses(401, 403, 404, 409, 422, 429) },
  }),
  async (c) => {
    const { id, index } = c.req.valid('param');
    const claim = await reportItem(c.var.db, c.var.caller, id, index, c.req.valid('json').reason, mailFor(c));
    return c.json(ok(presentClaim(claim), 'Problem reported: the shop will look at it.'), 201);
  },
);
