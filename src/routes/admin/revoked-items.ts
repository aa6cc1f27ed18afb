import { createRoute, z } from '@hono/zod-openapi';
import { createRouter, errorResponses, jsonResponse } from '../openapi';
import { paged, pagedEnvelope, PaginationQuery } from '../../lib/pagination';
import { listRevokedItems } from '../../services/orders/revoked-items';

// GET /admin/revoked-items: mounted under the admin prefix (src/app.ts), so the admin bearer token guards it.

const RevokedItemsQuery = PaginationQuery.extend({
  since: z.iso
    .datetime({ offset: true, message: 'since must be an ISO 8601 timestamp, e.g. 2026-11-21T12:00:00.000Z' })
    .transform((value) => new Date(value).toISOString())
    .optional()
    .openapi({ type: 'string', format: 'date-time', description: 'only items revoked at or after this instant', example: '2026-11-21T12:00:00.000Z' }),
});

const RevokedItem = z
  .object({
    order_id: z.number().int(),
    order_number: z.string().openapi({ example: 'ORD-20261121-7KQ2M9XA3B' }),
    user_id: z.number().int(),
    product_id: z.number().int(),
    sku: z.string().openapi({ description: "the product's current sku" }),
    item: z.string().openapi({ description: 'the stock item as delivered', example: 'CODE-AAAA-1111' }),
    revoked_at: z.string().openapi({ format: 'date-time', example: '2026-11-21T12:00:00.000Z' }),
    reason: z.enum(['cancelled', 'replaced']).openapi({ description: 'cancelled: its order was cancelled; replaced: a warranty claim replaced it with another item' }),
  })
  .openapi('RevokedItem');

export const revokedItemsRouter = createRouter().openapi(
  createRoute({
    method: 'get',
    path: '/revoked-items',
    operationId: 'listRevokedItems',
    tags: ['Admin'],
    summary: 'Items of cancelled orders and replaced items, newest revocation first, to deactivate at the vendor',
    description:
      'A cancelled order was refunded but its items had already been delivered: each is listed here (revoked, never ' +
      'resold) so the operator can deactivate it at the vendor. Poll with `since` set to the newest `revoked_at` seen.',
    security: [{ AdminBearer: [] }],
    request: { query: RevokedItemsQuery },
    responses: { 200: jsonResponse(pagedEnvelope(RevokedItem), 'A page of revoked items'), ...errorResponses(401, 422) },
  }),
  async (c) => {
    const { since, ...page } = c.req.valid('query');
    const { rows, total } = await listRevokedItems(c.var.db, since, page);
    const data = rows.map((r) => ({
      order_id: r.orderId,
      order_number: r.orderNumber,
      user_id: r.userId,
      product_id: r.productId,
      sku: r.sku,
      item: r.item,
      revoked_at: r.revokedAt,
      reason: r.reason,
    }));
    return c.json(paged(data, page, total), 200);
  },
);
