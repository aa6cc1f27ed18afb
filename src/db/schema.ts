import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

// Mirrors migrations/*.sql (test/schema.test.ts keeps the two in agreement). Money columns are integer cents.

export const users = sqliteTable(
  'users',
  {
    id: integer('id').primaryKey(),
    name: text('name').notNull(),
    email: text('email').notNull(),
    passwordHash: text('password_hash').notNull(),
    balanceCents: integer('balance_cents').notNull().default(0),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [uniqueIndex('users_email_unique').on(t.email)],
);

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull(),
    keyPreview: text('key_preview').notNull(),
    lastUsedAt: text('last_used_at'),
    createdAt: text('created_at').notNull(),
    revokedAt: text('revoked_at'),
  },
  (t) => [
    uniqueIndex('api_keys_key_hash_unique').on(t.keyHash),
    index('api_keys_user_active').on(t.userId, t.revokedAt),
  ],
);

export const products = sqliteTable(
  'products',
  {
    id: integer('id').primaryKey(),
    name: text('name').notNull(),
    sku: text('sku').notNull(),
    category: text('category'),
    priceCents: integer('price_cents').notNull(),
    allowedQuantities: text('allowed_quantities'),
    active: integer('active').notNull().default(1),
    stockCount: integer('stock_count').notNull().default(0),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('products_sku_unique').on(t.sku),
    index('products_active_created').on(t.active, t.createdAt, t.id),
  ],
);

export const orders = sqliteTable(
  'orders',
  {
    id: integer('id').primaryKey(),
    orderNumber: text('order_number').notNull(),
    userId: integer('user_id').notNull().references(() => users.id),
    productId: integer('product_id').notNull().references(() => products.id),
    productName: text('product_name').notNull(),
    quantity: integer('quantity').notNull(),
    unitPriceCents: integer('unit_price_cents').notNull(),
    totalAmountCents: integer('total_amount_cents').notNull(),
    status: text('status', { enum: ['pending', 'completed', 'cancelled'] }).notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('orders_order_number_unique').on(t.orderNumber),
    index('orders_user_created').on(t.userId, t.createdAt, t.id),
    index('orders_status_created').on(t.status, t.createdAt),
  ],
);

export const stockItems = sqliteTable(
  'stock_items',
  {
    id: integer('id').primaryKey(),
    productId: integer('product_id').notNull().references(() => products.id),
    content: text('content').notNull(),
    status: text('status', { enum: ['available', 'sold', 'revoked'] }).notNull().default('available'),
    orderId: integer('order_id').references(() => orders.id),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('stock_items_product_content_unique').on(t.productId, t.content),
    index('stock_items_product_status').on(t.productId, t.status, t.id),
    index('stock_items_order').on(t.orderId),
  ],
);

export const deposits = sqliteTable(
  'deposits',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id),
    amountCents: integer('amount_cents').notNull(),
    gateway: text('gateway').notNull(),
    cryptoCurrency: text('crypto_currency'),
    status: text('status', { enum: ['pending', 'paid', 'failed', 'expired'] }).notNull().default('pending'),
    paymentUrl: text('payment_url'),
    externalId: text('external_id'),
    transactionId: text('transaction_id'),
    expiresAt: text('expires_at').notNull(),
    paidAt: text('paid_at'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    index('deposits_user_created').on(t.userId, t.createdAt, t.id),
    index('deposits_status_expires').on(t.status, t.expiresAt),
  ],
);

export const walletTransactions = sqliteTable(
  'wallet_transactions',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id),
    type: text('type', { enum: ['deposit', 'purchase', 'refund', 'adjustment'] }).notNull(),
    amountCents: integer('amount_cents').notNull(),
    balanceAfterCents: integer('balance_after_cents').notNull(),
    description: text('description').notNull(),
    orderId: integer('order_id').references(() => orders.id),
    depositId: integer('deposit_id').references(() => deposits.id),
    operationId: text('operation_id').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('wallet_transactions_operation_unique').on(t.operationId),
    index('wallet_transactions_user_created').on(t.userId, t.createdAt, t.id),
    uniqueIndex('wallet_transactions_one_purchase').on(t.orderId).where(sql`type = 'purchase'`),
    uniqueIndex('wallet_transactions_one_refund').on(t.orderId).where(sql`type = 'refund'`),
    uniqueIndex('wallet_transactions_one_deposit').on(t.depositId).where(sql`type = 'deposit'`),
  ],
);

export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id),
    idempotencyKey: text('idempotency_key').notNull(),
    requestHash: text('request_hash').notNull(),
    resourceId: integer('resource_id').notNull(),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('idempotency_keys_user_key_unique').on(t.userId, t.idempotencyKey),
    index('idempotency_keys_created').on(t.createdAt),
  ],
);

export const sessions = sqliteTable(
  'sessions',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id),
    tokenHash: text('token_hash').notNull(),
    createdAt: text('created_at').notNull(),
    idleExpiresAt: text('idle_expires_at').notNull(),
    expiresAt: text('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('sessions_token_hash_unique').on(t.tokenHash),
    index('sessions_user').on(t.userId),
    index('sessions_idle_expires').on(t.idleExpiresAt),
  ],
);

export type OrderRow = typeof orders.$inferSelect;
export type DepositRow = typeof deposits.$inferSelect;
export type TransactionRow = typeof walletTransactions.$inferSelect;
export type ProductRow = typeof products.$inferSelect;
