import { z } from '@hono/zod-openapi';
import { usdAmount } from '../lib/validation';
import type { CouponInput } from '../services/orders/coupons';

// Request schemas of coupons, shared by the admin API and the operator console.

const MAX_AMOUNT_CENTS = 100_000_000_000;
const MAX_PRODUCT_IDS = 100;

/** 3..32 of A-Z, 0-9 and `-`, any case as sent; stored upper case. */
export const couponCodeInput = z
  .string('code must be a string')
  .regex(/^[A-Za-z0-9-]{3,32}$/, 'code must be 3 to 32 characters of A-Z, 0-9 and -')
  .transform((code) => code.toUpperCase())
  .openapi({ example: 'SPRING-10', description: '3..32 characters of A-Z, 0-9 and -; stored upper case; unique whatever its case' });

const timestamp = (field: string) =>
  z
    .iso.datetime({ message: `${field} must be an ISO 8601 UTC timestamp (e.g. 2026-12-01T00:00:00Z)` })
    .transform((value) => new Date(value).toISOString())
    .nullable()
    .optional()
    .openapi({ format: 'date-time' });

const count = (field: string, description: string) =>
  z.int(`${field} must be an integer`).min(1, `${field} must be at least 1`).max(1_000_000_000, `${field} is too large`).nullable().optional().openapi({ description });

const couponFields = {
  percent_off: z.int('percent_off must be an integer').min(1, 'percent_off must be between 1 and 100').max(100, 'percent_off must be between 1 and 100').optional()
    .openapi({ description: 'percent of the subtotal taken off (rounded half up); exactly one of percent_off, amount_off' }),
  amount_off: usdAmount('amount_off', 1, MAX_AMOUNT_CENTS).optional()
    .openapi({ description: 'USD taken off the subtotal (at most the whole subtotal); exactly one of percent_off, amount_off' }),
  min_total: usdAmount('min_total', 1, MAX_AMOUNT_CENTS).nullable().optional().openapi({ description: 'the smallest subtotal (after volume and discount) it applies to' }),
  starts_at: timestamp('starts_at'),
  expires_at: timestamp('expires_at'),
  max_redemptions: count('max_redemptions', 'orders it may be used for in all; null = no limit'),
  max_per_user: count('max_per_user', 'orders each buyer may use it for; default 1; null = no limit'),
  product_ids: z
    .array(z.int('product_ids must be integers').min(1, 'product_ids must be positive'), 'product_ids must be an array of product ids')
    .min(1, 'product_ids must not be empty (null = every product)')
    .max(MAX_PRODUCT_IDS, `at most ${MAX_PRODUCT_IDS} product_ids`)
    .nullable()
    .optional()
    .openapi({ description: 'the products it applies to; null = every product' }),
  variant_ids: z
    .array(z.int('variant_ids must be integers').min(1, 'variant_ids must be positive'), 'variant_ids must be an array of variant ids')
    .min(1, 'variant_ids must not be empty (null = every variant)')
    .max(MAX_PRODUCT_IDS, `at most ${MAX_PRODUCT_IDS} variant_ids`)
    .nullable()
    .optional()
    .openapi({ description: "narrows it to these variants (checked like product_ids; a product's id covers all its variants); null = every variant" }),
  active: z.boolean('active must be a boolean').optional().openapi({ description: 'default true' }),
};

type Fields = { percent_off?: number; amount_off?: number; starts_at?: string | null; expires_at?: string | null };
const bothKinds = (body: Fields) => body.percent_off !== undefined && body.amount_off !== undefined;
const inOrder = (body: Fields) => !(body.starts_at && body.expires_at && body.starts_at >= body.expires_at);
const windowRule = { path: ['expires_at'], message: 'expires_at must be after starts_at' };

export const CreateCouponBody = z
  .object({ code: couponCodeInput, ...couponFields })
  .refine((body) => !bothKinds(body) && (body.percent_off !== undefined || body.amount_off !== undefined), {
    path: ['percent_off'],
    message: 'exactly one of percent_off and amount_off is required',
  })
  .refine(inOrder, windowRule)
  .openapi({
    description: 'exactly one of `percent_off` and `amount_off` (422 on `percent_off` otherwise); `expires_at` after `starts_at`',
    oneOf: [
      { properties: { percent_off: {} }, required: ['percent_off'] },
      { properties: { amount_off: {} }, required: ['amount_off'] },
    ],
  });

export const UpdateCouponBody = z
  .object({
    // Refused rather than dropped: a client that sends it must not read the 200 as "renamed".
    code: z.unknown()
      .refine((value) => value === undefined, 'code cannot be changed: create a new coupon (and retire this one with active: false)')
      .optional()
      .openapi({ not: {}, description: 'cannot be changed: any value is refused (422)' }),
    ...couponFields,
  })
  .refine((body) => !bothKinds(body), { path: ['percent_off'], message: 'send at most one of percent_off and amount_off' })
  .refine(inOrder, windowRule)
  .openapi({ description: 'any field but `code` (a `code` is refused, 422); `starts_at` before `expires_at`, a field sent alone compared with the stored other; at most one of `percent_off` and `amount_off` (sending one switches the coupon to that kind)' });

/** A coupon body as the service's input (cents, camelCase). */
export const couponInput = (body: Omit<z.output<typeof UpdateCouponBody>, 'code'>): CouponInput => ({
  percentOff: body.percent_off,
  amountOffCents: body.amount_off,
  minTotalCents: body.min_total,
  startsAt: body.starts_at,
  expiresAt: body.expires_at,
  maxRedemptions: body.max_redemptions,
  maxPerUser: body.max_per_user,
  productIds: body.product_ids,
  variantIds: body.variant_ids,
  active: body.active,
});
