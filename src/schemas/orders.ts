import { z } from '@hono/zod-openapi';
import { ID_TEXT, MAX_PATH_ID, usdAmount } from '../lib/validation';

// Request schemas of purchases, shared by the API and the dashboard's shop.

const MAX_QUANTITY = 1000;
// The largest total a purchase can have: the largest product price times the largest quantity.
const MAX_TOTAL_CENTS = 100_000_000 * MAX_QUANTITY;

/** A coupon code as a client sends it: any case; a code that does not exist is answered 400 COUPON_INVALID. */
const couponCode = z
  .string('coupon must be a string')
  .min(1, 'coupon must not be empty')
  .max(64, 'coupon may not be greater than 64 characters')
  .openapi({ example: 'SPRING-10', description: 'a coupon code, any case' });

const productId = z
  .int('product_id must be an integer')
  .min(1, 'product_id must be a positive integer')
  .max(Number.MAX_SAFE_INTEGER, 'product_id is too large')
  .openapi({ example: 1 });

const variantId = z
  .int('variant_id must be an integer')
  .min(1, 'variant_id must be a positive integer')
  .max(Number.MAX_SAFE_INTEGER, 'variant_id is too large')
  .openapi({ example: 3, description: "the variant to buy (a stock entry's `variants[].variant_id`); required when the product has several active variants" });

const quantity = z
  .int('quantity must be an integer')
  .min(1, 'quantity must be at least 1')
  .max(MAX_QUANTITY, `quantity may not be greater than ${MAX_QUANTITY}`)
  .openapi({ example: 1 });

export const PurchaseBody = z.object({
  product_id: productId,
  variant_id: variantId.optional(),
  quantity,
  coupon: couponCode.optional(),
  expected_total: usdAmount('expected_total', 0, MAX_TOTAL_CENTS)
    .optional()
    .openapi({
      example: 9.98,
      description: 'the total you expect to pay (a quote\'s `total_amount`): any other total now → 409 PRICE_CHANGED, nothing charged',
    }),
});

/** The order a deposit pays for (`POST /wallet/deposit`'s `order`): a purchase whose total is locked. */
export const DepositOrder = PurchaseBody.extend({
  expected_total: usdAmount('expected_total', 0, MAX_TOTAL_CENTS).openapi({
    example: 9.98,
    description: "the order's total as quoted: when the deposit is credited the order is bought at exactly this total, or not at all",
  }),
}).openapi({
  description:
    'buy this order with the wallet in the same step that credits the deposit (needs the `deposits` and `orders` scopes); ' +
    'if it cannot be bought then, the credit stands and the deposit says why (`order_error`)',
});

/** GET /orders/quote: a query string, so ids and quantities arrive as text and are read as integers. */
export const QuoteQuery = z.object({
  product_id: z
    .string('product_id is required')
    .regex(ID_TEXT, `product_id must be a positive integer, at most ${MAX_PATH_ID}`)
    .transform(Number)
    .openapi({ type: 'integer', minimum: 1, maximum: MAX_PATH_ID, example: 1 }),
  variant_id: z
    .string('variant_id must be a string')
    .regex(ID_TEXT, `variant_id must be a positive integer, at most ${MAX_PATH_ID}`)
    .transform(Number)
    .optional()
    .openapi({ type: 'integer', minimum: 1, maximum: MAX_PATH_ID, example: 3, description: 'required when the product has several active variants' }),
  quantity: z
    .string('quantity is required')
    .regex(/^[1-9]\d{0,3}$/, 'quantity must be a positive integer')
    .transform(Number)
    .pipe(quantity)
    .openapi({ type: 'integer', minimum: 1, maximum: MAX_QUANTITY, example: 1 }),
  // A URL template filled in part (`...&coupon=`) means no coupon; in a JSON body an empty one is refused.
  coupon: z
    .string('coupon must be a string')
    .max(64, 'coupon may not be greater than 64 characters')
    .optional()
    .transform((code) => code || undefined)
    .openapi({ example: 'SPRING-10', description: 'a coupon code, any case; empty = none' }),
});

/** A purchase body as the service's input (cents, camelCase). */
export const purchaseRequest = (body: z.output<typeof PurchaseBody>) => ({
  productId: body.product_id,
  variantId: body.variant_id ?? null,
  quantity: body.quantity,
  coupon: body.coupon ?? null,
  expectedTotalCents: body.expected_total ?? null,
});
