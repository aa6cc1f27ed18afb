import { z } from '@hono/zod-openapi';
import { DateRangeQuery } from '../lib/date-range';
import { PaginationQuery } from '../lib/pagination';
import { optionalIdQuery, trimmedText, usdAmount } from '../lib/validation';
import { GATEWAYS } from '../services/gateways';
import { userEmail, userName } from './users';

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

/** A product body (whole or partial) as the service's input (cents, camelCase). */
export const productInput = (body: Partial<z.output<typeof ProductBody>>) => ({
  name: body.name,
  sku: body.sku,
  category: body.category,
  priceCents: body.price,
  allowedQuantities: body.allowed_quantities,
  active: body.active,
  cancellable: body.cancellable,
});

export const USER_ROLES = ['user', 'operator'] as const;

export const UpdateUserBody = z.object({
  name: userName.optional(),
  email: userEmail.optional(),
  role: z.enum(USER_ROLES, `role must be one of ${USER_ROLES.join(', ')}`).optional(),
  disabled: z.boolean('disabled must be a boolean').optional(),
});

/** `?q=` of the searches: trimmed, at most 254 characters (an email's limit); empty means no search. */
const search = (description: string) =>
  z.string().max(254, 'q may not be greater than 254 characters').trim().optional().openapi({ description });

export const UsersQuery = PaginationQuery.extend({
  q: search('a case-insensitive part of the name or email (a scan: prefer `email` for a whole address)'),
  email: userEmail.optional().openapi({ description: 'exactly this address, case-insensitive (through the unique index); wins over `q`' }),
});

const ORDER_STATUSES = ['pending', 'completed', 'cancelled'] as const;
export const OrdersQuery = PaginationQuery.extend({
  q: search('the start of an order number, or a case-insensitive part of the buyer\'s email or of the product\'s name'),
  user_id: optionalIdQuery('user_id'),
  status: z.enum(ORDER_STATUSES, `status must be one of ${ORDER_STATUSES.join(', ')}`).optional(),
  ...DateRangeQuery.shape,
});

const DEPOSIT_STATUSES = ['pending', 'paid', 'failed', 'expired'] as const;
export const DepositsQuery = PaginationQuery.extend({
  status: z.enum(DEPOSIT_STATUSES, `status must be one of ${DEPOSIT_STATUSES.join(', ')}`).optional(),
  gateway: z.enum(GATEWAYS, `gateway must be one of ${GATEWAYS.join(', ')}`).optional(),
  user_id: optionalIdQuery('user_id'),
  ...DateRangeQuery.shape,
});

export const AuditLogQuery = PaginationQuery.extend(DateRangeQuery.shape);

export const ProductsQuery = z.object({
  active: z.enum(['true', 'false'], "active must be 'true' or 'false'").optional(),
});

export const SalesQuery = z.object({
  days: z
    .string()
    .regex(/^\d{1,3}$/, 'days must be an integer between 1 and 366')
    .optional()
    .transform((v) => (v === undefined ? 30 : Number(v)))
    .pipe(z.number().int().min(1, 'days must be an integer between 1 and 366').max(366, 'days must be an integer between 1 and 366'))
    .openapi({ type: 'integer', minimum: 1, maximum: 366, default: 30 }),
});
