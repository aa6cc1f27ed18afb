import { z } from '@hono/zod-openapi';
import type { DepositRow, OrderRow, ProductRow, TransactionRow } from '../db/schema';
import { centsToAmount } from '../lib/money';
import type { StockEntry as StockRow } from '../services/stock';

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
    quantity: z.number().int(),
    unit_price: money(4.99),
    total_amount: money(9.98),
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
  quantity: o.quantity,
  unit_price: centsToAmount(o.unitPriceCents),
  total_amount: centsToAmount(o.totalAmountCents),
  status: o.status,
  cancellable: o.cancellable === 1,
  created_at: o.createdAt,
});

export const presentOrderWithItems = ({ order, stockItems }: { order: OrderRow; stockItems: string[] }) => ({
  ...presentOrder(order),
  stock_items: stockItems,
});

export const Transaction = z
  .object({
    id: z.number().int(),
    type: z.enum(['deposit', 'purchase', 'refund', 'adjustment']),
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
});

export const DepositStatus = z
  .object({
    id: z.number().int(),
    status: z.enum(['pending', 'paid', 'failed', 'expired']),
    amount: money(50),
    payment_method: z.string(),
    expires_at: timestamp,
    created_at: timestamp,
  })
  .openapi('DepositStatus');

export const presentDepositStatus = (d: DepositRow) => {
  const { id, status, amount, payment_method, expires_at, created_at } = presentDeposit(d);
  return { id, status, amount, payment_method, expires_at, created_at };
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
  })
  .openapi('StockEntry');

export const presentStock = (s: StockRow) => ({
  product_id: s.productId,
  product_name: s.productName,
  sku: s.sku,
  stock_count: s.stockCount,
  in_stock: s.stockCount > 0,
  price: centsToAmount(s.priceCents),
  cancellable: s.cancellable === 1,
});

/** A catalogue event's object: the product's public stock entry, and on a price change the price before it. */
export const ProductEventObject = StockEntry.extend({ previous_price: money(5.99).optional() }).openapi('ProductEventObject');

export const presentProductEventObject = ({ previousPriceCents, ...entry }: Omit<StockRow, 'allowedQuantities'> & { previousPriceCents?: number }) => ({
  ...presentStock(entry as StockRow),
  ...(previousPriceCents === undefined ? {} : { previous_price: centsToAmount(previousPriceCents) }),
});

export const Product = z
  .object({
    id: z.number().int(),
    name: z.string(),
    sku: z.string(),
    category: z.string().nullable(),
    price: z.number(),
    allowed_quantities: z.array(z.number().int()).nullable(),
    active: z.boolean(),
    cancellable: finalSaleFlag,
    stock_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Product');

export const presentProduct = (p: ProductRow) => ({
  id: p.id,
  name: p.name,
  sku: p.sku,
  category: p.category,
  price: centsToAmount(p.priceCents),
  allowed_quantities: p.allowedQuantities === null ? null : (JSON.parse(p.allowedQuantities) as number[]),
  active: p.active === 1,
  cancellable: p.cancellable === 1,
  stock_count: p.stockCount,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
});
