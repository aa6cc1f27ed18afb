import { z } from '@hono/zod-openapi';
import type { DepositRow, OrderRow, ProductRow, TransactionRow, VariantRow } from '../db/schema';
import { centsToAmount } from '../lib/money';
import { imageUrl } from '../services/catalogue/media';
import { variantsIn, type StockEntry as StockRow, type StockVariant } from '../services/catalogue/stock';
import type { Quote as QuoteValue } from '../services/orders/quotes';
import { volumePricesOf } from '../services/catalogue/pricing';

// Response shapes shared by several resources: the zod schema (OpenAPI) and the function that renders a row into it.

const money = (example: number) => z.number().openapi({ example, description: 'USD, at most 2 decimals' });
const timestamp = z.string().openapi({ format: 'date-time', example: '2026-11-21T12:00:00.000Z' });
export const finalSaleFlag = z.boolean().openapi({
  description: 'false: final sale (gift codes, accounts: goods that cannot be revoked at the vendor); orders of it can never be cancelled',
});

export const Order = z
  .object({
    id: z.number().int(),
    order_number: z.string().openapi({ example: 'ORD-20261121-7KQ2M9XA3B' }),
    product_id: z.number().int(),
    product_name: z.string(),
    variant_id: z.number().int().nullable().openapi({ description: 'the variant bought (null only for an order from before variants, in a replayed record)' }),
    variant_name: z.string().nullable().openapi({ description: "the variant's name at the purchase (`Standard` for a product without variants)", example: 'Standard' }),
    quantity: z.number().int(),
    unit_price: money(4.99).openapi({ description: 'the unit price paid: after volume pricing and the buyer\'s discount' }),
    total_amount: money(9.98).openapi({ description: 'what was charged (and what a cancellation refunds)' }),
    list_unit_price: money(4.99).openapi({ description: "the product's price at the purchase" }),
    discount_amount: money(0).openapi({ description: 'all that was taken off the list price: volume, discount and coupon' }),
    coupon: z.string().nullable().openapi({ description: 'the coupon code used, or null', example: null }),
    refunded_amount: money(0).openapi({ description: 'what was refunded of `total_amount` so far (operator and claim refunds, a cancellation); 0 when none' }),
    coupon_amount: money(0).openapi({ description: "the coupon's part of `discount_amount` (0 without a coupon)" }),
    status: z.enum(['pending', 'completed', 'cancelled']),
    cancellable: z.boolean().openapi({
      description: "the product's `cancellable` when the order was placed: false means final sale, and the order can never be cancelled",
    }),
    created_at: timestamp,
  })
  .openapi('Order');

export const OrderWithItems = Order.extend({
  stock_items: z.array(z.string()).openapi({ example: ['CODE-AAAA-1111', 'CODE-BBBB-2222'] }),
}).openapi('OrderWithItems');

export const presentOrder = (o: OrderRow) => ({
  id: o.id,
  order_number: o.orderNumber,
  product_id: o.productId,
  product_name: o.productName,
  variant_id: o.variantId ?? null,
  variant_name: o.variantName ?? null,
  quantity: o.quantity,
  unit_price: centsToAmount(o.unitPriceCents),
  total_amount: centsToAmount(o.totalAmountCents),
  // Snapshots written before orders had prices of their own (events, Idempotency-Key records) lack these fields:
  // such an order paid its unit price, with nothing taken off.
  list_unit_price: centsToAmount(o.listUnitPriceCents ?? o.unitPriceCents),
  discount_amount: centsToAmount(o.discountAmountCents ?? 0),
  coupon: o.coupon ?? null,
  refunded_amount: centsToAmount(o.refundedAmountCents ?? (o.status === 'cancelled' ? o.totalAmountCents : 0)),
  coupon_amount: centsToAmount(o.couponAmountCents ?? 0),
  status: o.status,
  cancellable: o.cancellable === 1,
  created_at: o.createdAt,
});

export const presentOrderWithItems = ({ order, stockItems }: { order: OrderRow; stockItems: string[] }) => ({
  ...presentOrder(order),
  stock_items: stockItems,
});

export const Quote = z
  .object({
    product_id: z.number().int(),
    quantity: z.number().int(),
    list_unit_price: money(4.99).openapi({ description: "the variant's price now" }),
    unit_price: money(4.49).openapi({ description: 'after volume pricing and your discount' }),
    discount_amount: money(1.0).openapi({ description: 'all that would be taken off the list price: volume, discount and coupon' }),
    coupon: z.string().nullable().openapi({ description: 'the coupon code (upper case), or null', example: null }),
    total_amount: money(8.98).openapi({ description: 'what a purchase would charge now: send it as `expected_total`' }),
  })
  .openapi('Quote');

export const presentQuote = (q: QuoteValue) => ({
  product_id: q.productId,
  quantity: q.quantity,
  list_unit_price: centsToAmount(q.listUnitPriceCents),
  unit_price: centsToAmount(q.unitPriceCents),
  discount_amount: centsToAmount(q.discountAmountCents),
  coupon: q.coupon,
  total_amount: centsToAmount(q.totalAmountCents),
});

export const Transaction = z
  .object({
    id: z.number().int(),
    type: z.enum(['deposit', 'purchase', 'refund', 'adjustment', 'commission']),
    amount: money(25).openapi({ description: 'signed USD amount: debits are negative' }),
    balance_after: money(25),
    description: z.string(),
    created_at: timestamp,
  })
  .openapi('Transaction');

export const presentTransaction = (t: TransactionRow) => ({
  id: t.id,
  type: t.type,
  amount: centsToAmount(t.amountCents),
  balance_after: centsToAmount(t.balanceAfterCents),
  description: t.description,
  created_at: t.createdAt,
});

/** What became of the order a deposit pays for (both null for a plain deposit, and until the deposit is credited). */
export const depositOrderFields = {
  order_id: z.number().int().nullable().openapi({ description: 'the order bought when the deposit was credited, or null', example: null }),
  order_error: z.string().nullable().openapi({
    description: "why the deposit's order could not be bought when it was credited (an error code such as `INSUFFICIENT_STOCK` or `PRICE_CHANGED`; the money stays in the wallet), or null",
    example: null,
  }),
};

export const Deposit = z
  .object({
    id: z.number().int(),
    amount: money(50),
    payment_method: z.string().openapi({ example: 'gateway_one' }),
    crypto_currency: z.string().nullable().openapi({ example: 'USDT' }),
    status: z.enum(['pending', 'paid', 'failed', 'expired']),
    payment_url: z.string().nullable().openapi({ format: 'uri' }),
    expires_at: timestamp,
    created_at: timestamp,
    ...depositOrderFields,
  })
  .openapi('Deposit');

/** When the deposit's vendor was last asked about it (a refresh or the scheduled job): on the operator's deposit views. */
export const lastCheckedAt = z.string().nullable().openapi({
  format: 'date-time',
  description: "when the deposit's payment provider was last asked about it (a refresh or the scheduled job); null: never (a generic slot's deposit is never asked)",
});

export const presentDeposit = (d: DepositRow) => ({
  id: d.id,
  amount: centsToAmount(d.amountCents),
  payment_method: d.gateway,
  crypto_currency: d.cryptoCurrency,
  status: d.status,
  payment_url: d.paymentUrl,
  expires_at: d.expiresAt,
  created_at: d.createdAt,
  // Snapshots written before deposits carried orders lack these fields.
  order_id: d.orderId ?? null,
  order_error: d.orderError ?? null,
});

export const DepositStatus = z
  .object({
    id: z.number().int(),
    status: z.enum(['pending', 'paid', 'failed', 'expired']),
    amount: money(50),
    payment_method: z.string(),
    expires_at: timestamp,
    created_at: timestamp,
    ...depositOrderFields,
  })
  .openapi('DepositStatus');

export const presentDepositStatus = (d: DepositRow) => {
  const { id, status, amount, payment_method, expires_at, created_at, order_id, order_error } = presentDeposit(d);
  return { id, status, amount, payment_method, expires_at, created_at, order_id, order_error };
};

export const discountPercent = z
  .number()
  .int()
  .min(0)
  .max(90)
  .openapi({ description: 'discount on every unit price after volume pricing, percent (0..90)', example: 0 });

export const VolumePrices = z
  .array(z.object({ min_quantity: z.number().int(), price: money(4.49) }))
  .nullable()
  .openapi({ description: 'per-unit price from `min_quantity` up (the tier with the largest `min_quantity` <= the quantity applies), or null' });
const description = z.string().openapi({ description: 'plain text (line breaks kept; never HTML or Markdown), at most 2,000 characters' });
const imageUrlField = z.string().nullable().openapi({ format: 'uri', description: "the product's image (PNG, JPEG or WebP) on this service, or null" });

/** A variant as a buyer sees it (public stock entries' `variants`). */
export const PublicVariant = z
  .object({
    variant_id: z.number().int(),
    name: z.string().openapi({ example: '3 months' }),
    sku: z.string(),
    price: money(4.99),
    volume_prices: VolumePrices,
    allowed_quantities: z.array(z.number().int()).nullable().openapi({ description: 'the pack sizes it is sold in; null: any quantity' }),
    backorders: z.boolean().openapi({ description: 'whether it takes backorders' }),
    stock_count: z.number().int(),
    in_stock: z.boolean(),
  })
  .openapi('Variant');

/** What a buyer chooses by, after the spec's fields of a stock entry. */
const catalogueFields = {
  category: z.string().nullable(),
  image_url: imageUrlField,
  final_sale: z.boolean().openapi({ description: 'true: orders of it can never be cancelled (the opposite of `cancellable`)' }),
  allowed_quantities: z.array(z.number().int()).nullable().openapi({ description: 'the pack sizes it is sold in; null: any quantity' }),
};

export const StockEntry = z
  .object({
    product_id: z.number().int(),
    product_name: z.string(),
    sku: z.string(),
    stock_count: z.number().int(),
    in_stock: z.boolean(),
    price: money(4.99),
    cancellable: finalSaleFlag,
    ...catalogueFields,
    volume_prices: VolumePrices,
    warranty_hours: z.number().int().openapi({ description: 'replacement warranty: hours after a purchase within which a bad item may be reported (0: none)' }),
    variants: z.array(PublicVariant).openapi({
      description: 'the active variants, by position: what a buyer picks (`variant_id` of `POST /orders`); one, `Standard`, for a product without variants',
    }),
  })
  .openapi('StockEntry');

/** `GET /stock/{product_id}`: the entry and the product's description (the list leaves descriptions out). */
export const StockDetail = StockEntry.extend({ description: description.nullable() }).openapi('StockDetail');

const packSizes = (allowedQuantities: string | null) => (allowedQuantities === null ? null : (JSON.parse(allowedQuantities) as number[]));

/** The entry of the public list; `origin` makes the image's URL absolute. */
export const presentStock = (s: StockRow, origin: string) => ({
  product_id: s.productId,
  product_name: s.productName,
  sku: s.sku,
  stock_count: s.stockCount,
  in_stock: s.stockCount > 0,
  price: centsToAmount(s.priceCents),
  cancellable: s.cancellable === 1,
  category: s.category,
  image_url: imageUrl(origin, s.image),
  final_sale: s.cancellable === 0,
  allowed_quantities: packSizes(s.allowedQuantities),
  volume_prices: volumePricesOf(s.volumePrices),
  warranty_hours: s.warrantyHours,
  variants: variantsIn(s).map(presentPublicVariant),
});

export const presentStockDetail = (s: StockRow & { description: string | null }, origin: string) => ({ ...presentStock(s, origin), description: s.description });
/** A catalogue event's object: the product's public stock entry, and on a price change the price before it. */
export const ProductEventObject = StockEntry.extend({ previous_price: money(5.99).optional() }).openapi('ProductEventObject');

/** Catalogue fields are absent from events written before they existed. */
const CATALOGUE_DEFAULTS = { category: null, image: null, allowedQuantities: null, volumePrices: null, warrantyHours: 0 };

/**
 * A catalogue event's snapshot carries its image's absolute URL (`imageUrl`, written with the origin of the change's
 * request); events written before it did carry the image's name, shown as its path on this service.
 */
export const presentProductEventObject = ({
  previousPriceCents,
  imageUrl: absolute,
  ...entry
}: Partial<StockRow> & { previousPriceCents?: number; imageUrl?: string | null }) => {
  const object = presentStock({ ...CATALOGUE_DEFAULTS, ...entry } as StockRow, '');
  return {
    ...object,
    image_url: absolute === undefined ? object.image_url : absolute,
    ...(previousPriceCents === undefined ? {} : { previous_price: centsToAmount(previousPriceCents) }),
  };
};

export const Product = z
  .object({
    id: z.number().int(),
    name: z.string(),
    sku: z.string(),
    category: z.string().nullable(),
    price: z.number(),
    allowed_quantities: z.array(z.number().int()).nullable(),
    volume_prices: VolumePrices,
    active: z.boolean(),
    cancellable: finalSaleFlag,
    stock_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    description: description.nullable(),
    image_url: imageUrlField,
    warranty_hours: z.number().int().openapi({ description: 'replacement warranty in hours after a purchase (0: none)' }),
    referral_percent: z.number().int().nullable().openapi({ description: "the referrer's percent of this product's orders: null = the shop's, 0 = none" }),
  })
  .openapi('Product');

/** A variant as the operator sees it: `id` is its public `variant_id`. */
export const AdminVariant = PublicVariant.extend({
  id: z.number().int(),
  product_id: z.number().int(),
  active: z.boolean(),
  position: z.number().int(),
  backorder_limit: z.number().int().openapi({ description: 'the most units that may wait at once' }),
  created_at: timestamp,
}).openapi('AdminVariant');

export const presentPublicVariant = (v: StockVariant) => ({
  variant_id: v.id,
  name: v.name,
  sku: v.sku,
  price: centsToAmount(v.priceCents),
  volume_prices: volumePricesOf(v.volumePrices),
  allowed_quantities: packSizes(v.allowedQuantities),
  backorders: v.backorders === 1,
  stock_count: v.stockCount,
  in_stock: v.stockCount > 0,
});

export const presentAdminVariant = (v: VariantRow) => ({
  id: v.id,
  product_id: v.productId,
  ...presentPublicVariant(v),
  active: v.active === 1,
  position: v.position,
  backorder_limit: v.backorderLimit,
  created_at: v.createdAt,
});

export const presentProduct = (p: ProductRow, origin: string) => ({
  id: p.id,
  name: p.name,
  sku: p.sku,
  category: p.category,
  price: centsToAmount(p.priceCents),
  allowed_quantities: packSizes(p.allowedQuantities),
  volume_prices: volumePricesOf(p.volumePrices),
  active: p.active === 1,
  cancellable: p.cancellable === 1,
  stock_count: p.stockCount,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
  description: p.description,
  image_url: imageUrl(origin, p.image),
  warranty_hours: p.warrantyHours ?? 0,
  referral_percent: p.referralPercent ?? null,
});
