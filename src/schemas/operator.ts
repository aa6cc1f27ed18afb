import { z } from '@hono/zod-openapi';
import { trimmedText, usdAmount } from '../lib/validation';

// Request schemas of the operator's writes, shared by the admin API and the operator console.

const MAX_PRICE_CENTS = 100_000_000;
const MAX_ADJUSTMENT_CENTS = 100_000_000;

export const AdjustmentBody = z.object({
  amount: usdAmount('amount', -MAX_ADJUSTMENT_CENTS, MAX_ADJUSTMENT_CENTS)
    .refine((cents) => cents !== 0, 'amount must not be zero')
    .openapi({ not: { const: 0 } }),
  description: trimmedText('description', 500),
});

const packSizes = z
  .array(z.int().min(1).max(1000), 'allowed_quantities must be an array of integers')
  .min(1, 'allowed_quantities must not be empty')
  .max(100)
  .nullable();

export const ProductBody = z.object({
  name: trimmedText('name', 200),
  sku: trimmedText('sku', 100),
  category: trimmedText('category', 100).nullable().optional(),
  price: usdAmount('price', 1, MAX_PRICE_CENTS),
  allowed_quantities: packSizes.optional(),
  active: z.boolean('active must be a boolean').optional(),
  cancellable: z.boolean('cancellable must be a boolean').optional().openapi({
    description: 'default true; false makes the product final sale: its orders (from now on) can never be cancelled',
  }),
});
