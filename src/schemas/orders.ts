import { z } from '@hono/zod-openapi';

// Request schemas of purchases, shared by the API and the dashboard's shop.

const MAX_QUANTITY = 1000;

export const PurchaseBody = z.object({
  product_id: z
    .int('product_id must be an integer')
    .min(1, 'product_id must be a positive integer')
    .max(Number.MAX_SAFE_INTEGER, 'product_id is too large')
    .openapi({ example: 1 }),
  quantity: z
    .int('quantity must be an integer')
    .min(1, 'quantity must be at least 1')
    .max(MAX_QUANTITY, `quantity may not be greater than ${MAX_QUANTITY}`)
    .openapi({ example: 1 }),
});
