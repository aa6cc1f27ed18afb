import { z } from '@hono/zod-openapi';
import { referralPercent } from './referrals';
import { DateRangeQuery } from '../lib/date-range';
import { PaginationQuery } from '../lib/pagination';
import { humanLine, humanText, optionalIdQuery, usdAmount } from '../lib/validation';
import { GATEWAYS } from '../services/payments/gateways';
import type { VolumePrice } from '../services/catalogue/pricing';
import { fieldError } from '../lib/errors';
import { userEmail, userName } from './users';

// Request schemas of the operator's writes, shared by the admin API and the operator console.

const MAX_PRICE_CENTS = 100_000_000;
const MAX_ADJUSTMENT_CENTS = 100_000_000;

export const AdjustmentBody = z.object({
  amount: usdAmount('amount', -MAX_ADJUSTMENT_CENTS, MAX_ADJUSTMENT_CENTS)
    .refine((cents) => cents !== 0, 'amount must not be zero')
    .openapi({ not: { const: 0 } }),
  description: humanLine('description', 500),
});

const packSizes = z
  .array(z.int().min(1).max(1000), 'allowed_quantities must be an array of integers')
  .min(1, 'allowed_quantities must not be empty')
  .max(100)
  .nullable();

const MAX_VOLUME_PRICES = 10;

/** Volume prices: at most 10 tiers, `min_quantity` >= 2 and increasing, each price below the one before. */
export const volumePrices = z
  .array(
    z.object({
      min_quantity: z.int('min_quantity must be an integer').min(2, 'min_quantity must be at least 2').max(1000, 'min_quantity may not be greater than 1000'),
      price: usdAmount('price', 1, MAX_PRICE_CENTS),
    }),
    'volume_prices must be an array of { min_quantity, price }',
  )
  .max(MAX_VOLUME_PRICES, `at most ${MAX_VOLUME_PRICES} volume prices`)
  .refine(
    (tiers) => tiers.every((tier, i) => i === 0 || (tier.min_quantity > tiers[i - 1].min_quantity && tier.price < tiers[i - 1].price)),
    'each min_quantity must be greater, and each price lower, than the one before',
  )
  .nullable()
  .openapi({
    description:
      'per-unit prices from a quantity up: a purchase of quantity q pays the price of the tier with the largest `min_quantity` <= q, ' +
      'or `price` below every tier; `min_quantity` >= 2 and increasing, each price below the one before and below `price`, at most 10; `null` or `[]` = none',
  });
/** Plain text with its line breaks, shown as written (never HTML or Markdown). */
const productDescription = humanText('description', 2000);

export const ProductBody = z.object({
  name: humanLine('name', 200),
  sku: humanLine('sku', 100),
  category: humanLine('category', 100).nullable().optional(),
  price: usdAmount('price', 1, MAX_PRICE_CENTS),
  allowed_quantities: packSizes.optional(),
  volume_prices: volumePrices.optional(),
  active: z.boolean('active must be a boolean').optional(),
  cancellable: z.boolean('cancellable must be a boolean').optional().openapi({
    description: 'default true; false makes the product final sale: its orders (from now on) can never be cancelled',
  }),
  description: productDescription.nullable().optional(),
  warranty_hours: z
    .int('warranty_hours must be an integer')
    .min(0, 'warranty_hours must be between 0 and 8760')
    .max(8760, 'warranty_hours must be between 0 and 8760')
    .optional()
    .openapi({ description: 'replacement warranty: hours after a purchase within which the buyer may report an item (default 0: none)' }),
  referral_percent: referralPercent('referral_percent')
    .nullable()
    .optional()
    .openapi({ description: "the referrer's percent of this product's orders: null (default) = the shop's, 0 = none (docs/referrals.md)" }),
});

/** A product body (whole or partial) as the service's input (cents, camelCase). */
export const productInput = (body: Partial<z.output<typeof ProductBody>>) => ({
  name: body.name,
  sku: body.sku,
  category: body.category,
  priceCents: body.price,
  allowedQuantities: body.allowed_quantities,
  volumePrices: volumePricesInput(body.volume_prices, body.price),
  active: body.active,
  cancellable: body.cancellable,
  description: body.description,
  warrantyHours: body.warranty_hours,
  referralPercent: body.referral_percent,
});

/**
 * Volume prices as the service stores them (`[]` is none). Each must be below the product's price: checked here when
 * the body sends both, against the stored other in the update's batch when it sends one (src/services/catalogue/products.ts).
 */
function volumePricesInput(tiers: z.output<typeof volumePrices> | undefined, priceCents: number | undefined): VolumePrice[] | null | undefined {
  if (tiers === undefined || tiers === null || tiers.length === 0) return tiers === undefined ? undefined : null;
  if (priceCents !== undefined && tiers[0].price >= priceCents) throw fieldError('volume_prices', 'each volume price must be below the product\'s price');
  return tiers.map((tier) => ({ minQuantity: tier.min_quantity, priceCents: tier.price }));
}

/** `POST /admin/products/{id}/variants` (`PATCH /admin/variants/{id}`: any of its fields). */
export const VariantBody = z.object({
  name: humanLine('name', 100).openapi({ example: '3 months' }),
  sku: humanLine('sku', 100).openapi({ description: 'unique among all variants' }),
  price: usdAmount('price', 1, MAX_PRICE_CENTS),
  volume_prices: volumePrices.optional(),
  allowed_quantities: packSizes.optional(),
  backorders: z.boolean('backorders must be a boolean').optional().openapi({ description: 'default false: whether the variant takes backorders' }),
  backorder_limit: z
    .int('backorder_limit must be an integer')
    .min(1, 'backorder_limit must be between 1 and 100000')
    .max(100_000, 'backorder_limit must be between 1 and 100000')
    .optional()
    .openapi({ description: 'default 100: the most units that may wait at once' }),
  active: z.boolean('active must be a boolean').optional().openapi({ description: 'default true' }),
  position: z
    .int('position must be an integer')
    .min(0, 'position must be between 0 and 1000000')
    .max(1_000_000, 'position must be between 0 and 1000000')
    .optional()
    .openapi({ description: 'orders the variants (ascending, ties by id); default: after the last' }),
});

/** A variant body (whole or partial) as the service's input. */
export const variantInput = (body: Partial<z.output<typeof VariantBody>>) => ({
  name: body.name,
  sku: body.sku,
  priceCents: body.price,
  volumePrices: volumePricesInput(body.volume_prices, body.price),
  allowedQuantities: body.allowed_quantities,
  backorders: body.backorders,
  backorderLimit: body.backorder_limit,
  active: body.active,
  position: body.position,
});

export const USER_ROLES = ['user', 'operator'] as const;

export const UpdateUserBody = z.object({
  name: userName.optional(),
  email: userEmail.optional(),
  role: z.enum(USER_ROLES, `role must be one of ${USER_ROLES.join(', ')}`).optional(),
  disabled: z.boolean('disabled must be a boolean').optional(),
  discount_percent: z
    .int('discount_percent must be an integer')
    .min(0, 'discount_percent must be between 0 and 90')
    .max(90, 'discount_percent must be between 0 and 90')
    .optional()
    .openapi({ description: "a reseller's discount on every unit price (after volume pricing), rounded half up to the cent" }),
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

/** `POST /admin/deposits/{id}/refresh` and the console's "Ask the vendor": an optional vendor payment id (NOWPayments). */
export const RefreshDepositBody = z.object({
  payment_id: z
    .string('payment_id must be a string')
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'payment_id must be 1 to 64 letters, digits, hyphens or underscores')
    .optional()
    .openapi({
      description:
        "The vendor's payment id, copied from the vendor's dashboard, for a NOWPayments deposit whose notifications never arrived. Used for this lookup, and stored when the vendor's answer names this deposit; another provider's deposit: 422.",
      example: '5077125051',
    }),
});
