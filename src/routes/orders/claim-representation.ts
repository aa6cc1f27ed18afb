import { z } from '@hono/zod-openapi';
import type { ClaimRow } from '../../db/schema';
import { centsToAmount } from '../../lib/money';
import type { AdminClaim } from '../../services/orders/claims';

// A warranty claim as the API renders it: to its buyer (the order's `claims`, the report's answer, the events
// order.item_replaced / order.item_refunded / order.claim_rejected) and, with its order's names, to the operator.

const timestamp = z.string().openapi({ format: 'date-time', example: '2026-11-21T12:00:00.000Z' });

export const Claim = z
  .object({
    id: z.number().int(),
    order_id: z.number().int(),
    item_index: z.number().int().openapi({ description: "0-based index into the order's `stock_items`" }),
    status: z.enum(['open', 'replaced', 'refunded', 'rejected']),
    reason: z.string(),
    resolution: z.string().nullable().openapi({ description: "what the shop decided (a rejection's note), or null while open" }),
    refund_amount: z.number().nullable().openapi({ description: 'USD refunded for the item (status refunded), else null' }),
    created_at: timestamp,
    resolved_at: timestamp.nullable(),
  })
  .openapi('Claim');

export const presentClaim = (c: ClaimRow) => ({
  id: c.id,
  order_id: c.orderId,
  item_index: c.itemIndex,
  status: c.status,
  reason: c.reason,
  resolution: c.resolution ?? null,
  refund_amount: c.refundCents === null || c.refundCents === undefined ? null : centsToAmount(c.refundCents),
  created_at: c.createdAt,
  resolved_at: c.resolvedAt ?? null,
});

export const AdminClaimSchema = Claim.extend({
  user_id: z.number().int(),
  order_number: z.string(),
  product_id: z.number().int(),
  product_name: z.string(),
}).openapi('AdminClaim');

export const presentAdminClaim = (c: AdminClaim) => ({
  ...presentClaim(c),
  user_id: c.userId,
  order_number: c.orderNumber,
  product_id: c.productId,
  product_name: c.productName,
});
