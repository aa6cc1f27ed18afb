import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core';

// Mirrors migrations/*.sql (test/db/schema.test.ts keeps the two in agreement). Money columns are integer cents.

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
    role: text('role', { enum: ['user', 'operator'] }).notNull().default('user'),
    /** Set while the account is disabled: its keys and sessions are refused, nothing is deleted. */
    disabledAt: text('disabled_at'),
    /** 0: no order_receipt / deposit_credited emails (security notices are always sent). */
    emailReceipts: integer('email_receipts').notNull().default(1),
    /** 0 only for a sign-up (or email change) under EMAIL_VERIFICATION=required whose link is not opened yet. */
    emailVerified: integer('email_verified').notNull().default(1),
    /** A reseller's discount on every unit price, 0..90. */
    discountPercent: integer('discount_percent').notNull().default(0),
    /** Set while the account is on hold (a reversed payment, or the operator): no deposits, no purchases. */
    heldAt: text('held_at'),
    holdReason: text('hold_reason'),
    /** The code of the user's referral link (/r/<code>), set at creation (a trigger: every path that creates users). */
    referralCode: text('referral_code'),
    /** The user whose code brought this one, recorded at creation only (docs/referrals.md). */
    referredBy: integer('referred_by').references((): AnySQLiteColumn => users.id),
    /** Set while the operator has switched the user's referrals off: nothing more is earned. */
    referralsOffAt: text('referrals_off_at'),
    /** Kept, not counted: rows of the user's referral earnings (a trigger on referral_earnings), and cents moved. */
    referralEarningsCount: integer('referral_earnings_count').notNull().default(0),
    referralTransferredCents: integer('referral_transferred_cents').notNull().default(0),
    /** Where the account was made (client address and Cloudflare country), and where it was last seen signed in. */
    signupIp: text('signup_ip'),
    signupCountry: text('signup_country'),
    lastSeenIp: text('last_seen_ip'),
    lastSeenCountry: text('last_seen_country'),
    lastSeenAt: text('last_seen_at'),
    /** last_seen_ip as 32 hex digits (src/lib/ip.ts): an ip rule's range finds the accounts last seen in it. */
    lastSeenIpHex: text('last_seen_ip_hex'),
  },
  (t) => [
    uniqueIndex('users_email_unique').on(t.email),
    uniqueIndex('users_referral_code_unique').on(t.referralCode),
    index('users_referred_by').on(t.referredBy).where(sql`referred_by IS NOT NULL`),
    index('users_last_seen_ip_hex').on(t.lastSeenIpHex).where(sql`last_seen_ip_hex IS NOT NULL`),
  ],
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
    /** Bitmask of src/lib/scopes.ts; existing keys have every scope. */
    scopes: integer('scopes').notNull().default(63),
    spendLimitCents: integer('spend_limit_cents'),
    /** JSON array of the addresses and CIDR ranges as given; `ipRanges` is the same as [start, end] hex pairs. */
    allowedIps: text('allowed_ips'),
    ipRanges: text('ip_ranges'),
    expiresAt: text('expires_at'),
    /** The API key that made this one (its family: src/services/accounts/keys.ts); null when no key did. */
    createdByKeyId: integer('created_by_key_id').references((): AnySQLiteColumn => apiKeys.id),
    /** The makers' ids, root first: '/<id>/<id>/', or '/' when no key made it. */
    ancestry: text('ancestry').notNull().default('/'),
    /** Sandbox only: the LIVE keys above a test key made by a live key, root first, '/<id>/<id>/'; null otherwise. */
    liveAncestry: text('live_ancestry'),
  },
  (t) => [
    uniqueIndex('api_keys_key_hash_unique').on(t.keyHash),
    index('api_keys_user_active').on(t.userId, t.revokedAt),
    index('api_keys_ancestry').on(t.ancestry),
  ],
);

/**
 * A user's totals, kept by the triggers of migrations/0030_counts_kept.sql in the statement that changes what they
 * count: the lists' `meta.total` and the dashboard read one row instead of counting the history.
 */
export const userCounts = sqliteTable('user_counts', {
  userId: integer('user_id').primaryKey().references(() => users.id),
  ordersCount: integer('orders_count').notNull().default(0),
  pendingOrders: integer('pending_orders').notNull().default(0),
  /** total_amount_cents of the orders not cancelled. */
  spentCents: integer('spent_cents').notNull().default(0),
  transactionsCount: integer('transactions_count').notNull().default(0),
  depositsCount: integer('deposits_count').notNull().default(0),
});

/** A key family's spending per UTC day ('YYYY-MM-DD'): the orders of the key and of every key made from it. */
export const apiKeySpendDays = sqliteTable(
  'api_key_spend_days',
  {
    id: integer('id').primaryKey(),
    apiKeyId: integer('api_key_id').notNull().references(() => apiKeys.id),
    day: text('day').notNull(),
    spentCents: integer('spent_cents').notNull(),
  },
  (t) => [uniqueIndex('api_key_spend_days_key_day').on(t.apiKeyId, t.day)],
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
    /** 0 = final sale: orders of it cannot be cancelled. */
    cancellable: integer('cancellable').notNull().default(1),
    description: text('description'),
    /** '<sha256>.<png|jpg|webp>': the image's object in the MEDIA bucket (src/services/catalogue/media.ts). */
    image: text('image'),
    /** JSON [{ min_quantity, price_cents }] (src/services/catalogue/pricing.ts), or null. */
    volumePrices: text('volume_prices'),
    /** Hours after a purchase within which a buyer may report a delivered item; 0 = no warranty. */
    warrantyHours: integer('warranty_hours').notNull().default(0),
    /** How many of its variants are active (kept with them): listed while > 0, a variant_id is needed when > 1. */
    activeVariants: integer('active_variants').notNull().default(1),
    /** The referrer's percent of this product's orders: null = the shop's (referral_settings), 0 = none. */
    referralPercent: integer('referral_percent'),
  },
  (t) => [
    uniqueIndex('products_sku_unique').on(t.sku),
    index('products_active_created').on(t.active, t.createdAt, t.id),
    index('products_image').on(t.image).where(sql`image IS NOT NULL`),
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
    /** The product's flag when the order was placed. */
    cancellable: integer('cancellable').notNull().default(1),
    /** The product's price at the purchase; the discount is everything taken off it (volume, discount, coupon). */
    listUnitPriceCents: integer('list_unit_price_cents').notNull(),
    discountAmountCents: integer('discount_amount_cents').notNull().default(0),
    /** The coupon's code, or null. */
    coupon: text('coupon'),
    /** The API key that placed the order (NULL from the dashboard): its daily spend limit sums these. */
    apiKeyId: integer('api_key_id').references(() => apiKeys.id),
    /** What was refunded so far (operator and claim refunds, a cancellation's rest); at most total_amount_cents. */
    refundedAmountCents: integer('refunded_amount_cents').notNull().default(0),
    /** The coupon's part of `discount_amount_cents` (0 without a coupon). */
    couponAmountCents: integer('coupon_amount_cents').notNull().default(0),
    variantId: integer('variant_id').references((): AnySQLiteColumn => productVariants.id),
    /** The variant's name at the purchase. */
    variantName: text('variant_name'),
    /** The product's warranty_hours when the order was bought: a later change of the product does not reach back. */
    warrantyHours: integer('warranty_hours').notNull().default(0),
  },
  (t) => [
    uniqueIndex('orders_order_number_unique').on(t.orderNumber),
    index('orders_api_key_created').on(t.apiKeyId, t.createdAt).where(sql`api_key_id IS NOT NULL`),
    index('orders_user_created').on(t.userId, t.createdAt, t.id),
    index('orders_status_created').on(t.status, t.createdAt),
    index('orders_created').on(t.createdAt, t.id),
    index('orders_user_cancelled').on(t.userId, t.updatedAt).where(sql`status = 'cancelled'`),
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
    revokedAt: text('revoked_at'),
    /** The item that took this one's place in its order (a claim's replacement); this one is then revoked. */
    replacedBy: integer('replaced_by'),
    /** A replacement's place in its order: the id of the slot's first item (null: its own id). */
    slot: integer('slot'),
    variantId: integer('variant_id').references((): AnySQLiteColumn => productVariants.id),
  },
  (t) => [
    uniqueIndex('stock_items_product_content_unique').on(t.productId, t.content),
    index('stock_items_product_status').on(t.productId, t.status, t.id),
    index('stock_items_order').on(t.orderId).where(sql`order_id IS NOT NULL`),
    index('stock_items_revoked').on(t.revokedAt, t.id).where(sql`revoked_at IS NOT NULL`),
    index('stock_items_variant_status').on(t.variantId, t.status, t.id),
  ],
);

/** What a buyer picks: a product's option with its own price, pack sizes, SKU and stock (docs/catalogue.md). */
export const productVariants = sqliteTable(
  'product_variants',
  {
    id: integer('id').primaryKey(),
    productId: integer('product_id').notNull().references(() => products.id),
    name: text('name').notNull(),
    sku: text('sku').notNull(),
    priceCents: integer('price_cents').notNull(),
    volumePrices: text('volume_prices'),
    allowedQuantities: text('allowed_quantities'),
    stockCount: integer('stock_count').notNull().default(0),
    active: integer('active').notNull().default(1),
    position: integer('position').notNull().default(0),
    backorders: integer('backorders').notNull().default(0),
    backorderLimit: integer('backorder_limit').notNull().default(100),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [uniqueIndex('product_variants_sku_unique').on(t.sku), index('product_variants_product').on(t.productId, t.position, t.id)],
);

export type VariantRow = typeof productVariants.$inferSelect;

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
    reference: text('reference'),
    vendorPaymentId: text('vendor_payment_id'),
    /** The provider that made the invoice (`generic` or a vendor): only a vendor's deposit is ever looked up. */
    provider: text('provider').notNull().default('generic'),
    /** When the vendor was last asked about the deposit (a refresh or the scheduled job). */
    lastCheckedAt: text('last_checked_at'),
    /** An order the deposit pays for, bought in the batch that credits it, at the locked total (null: a plain deposit). */
    orderProductId: integer('order_product_id').references(() => products.id),
    orderQuantity: integer('order_quantity'),
    orderCoupon: text('order_coupon'),
    orderExpectedTotalCents: integer('order_expected_total_cents'),
    /** The API key that made the deposit (its spend limit applies to the order); null from the dashboard. */
    apiKeyId: integer('api_key_id').references(() => apiKeys.id),
    /** The order bought when the deposit was credited, or the error code that refused it. */
    orderId: integer('order_id').references(() => orders.id),
    orderError: text('order_error'),
    /** The variant of the order it pays for (null: the product's one active variant). */
    orderVariantId: integer('order_variant_id'),
    /** The request's Cloudflare country when the deposit was made: evidence on its receipt and its order's invoice. */
    ipCountry: text('ip_country'),
  },
  (t) => [
    uniqueIndex('deposits_reference_unique').on(t.reference),
    index('deposits_user_created').on(t.userId, t.createdAt, t.id),
    index('deposits_status_expires').on(t.status, t.expiresAt),
    index('deposits_created').on(t.createdAt, t.id),
    index('deposits_status_created').on(t.status, t.createdAt, t.id),
    index('deposits_gateway_external').on(t.gateway, t.externalId),
    index('deposits_gateway_vendor_payment').on(t.gateway, t.vendorPaymentId).where(sql`vendor_payment_id IS NOT NULL`),
    index('deposits_vendor_open').on(t.expiresAt).where(sql`provider <> 'generic' AND status IN ('pending', 'expired')`),
  ],
);

export const walletTransactions = sqliteTable(
  'wallet_transactions',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id),
    type: text('type', { enum: ['deposit', 'purchase', 'refund', 'adjustment', 'commission'] }).notNull(),
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
    index('wallet_transactions_type_created').on(t.type, t.createdAt),
    uniqueIndex('wallet_transactions_one_purchase').on(t.orderId).where(sql`type = 'purchase'`),
    uniqueIndex('wallet_transactions_one_deposit').on(t.depositId).where(sql`type = 'deposit'`),
    index('wallet_transactions_user_refunds').on(t.userId, t.createdAt).where(sql`type = 'refund'`),
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
    responseSnapshot: text('response_snapshot'),
  },
  (t) => [
    uniqueIndex('idempotency_keys_user_key_unique').on(t.userId, t.idempotencyKey),
    index('idempotency_keys_created').on(t.createdAt),
  ],
);

export const operatorIdempotencyKeys = sqliteTable(
  'operator_idempotency_keys',
  {
    id: integer('id').primaryKey(),
    idempotencyKey: text('idempotency_key').notNull(),
    requestHash: text('request_hash').notNull(),
    resourceId: integer('resource_id').notNull(),
    responseSnapshot: text('response_snapshot').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('operator_idempotency_keys_key_unique').on(t.idempotencyKey),
    index('operator_idempotency_keys_created').on(t.createdAt),
  ],
);

export const stockUploads = sqliteTable(
  'stock_uploads',
  {
    id: integer('id').primaryKey(),
    reference: text('reference').notNull(),
    productId: integer('product_id').notNull().references(() => products.id),
    added: integer('added').notNull(),
    skipped: integer('skipped').notNull(),
    createdAt: text('created_at').notNull(),
    variantId: integer('variant_id').references((): AnySQLiteColumn => productVariants.id),
  },
  (t) => [uniqueIndex('stock_uploads_reference_unique').on(t.reference)],
);

export const GATEWAY_OUTCOMES = ['credited', 'closed', 'duplicate', 'amount_mismatch', 'in_progress', 'reversed', 'unconfirmed'] as const;

export const gatewayEvents = sqliteTable(
  'gateway_events',
  {
    id: integer('id').primaryKey(),
    reference: text('reference').notNull(),
    gateway: text('gateway').notNull(),
    depositId: integer('deposit_id').notNull().references(() => deposits.id),
    /** The gateway's own status word (or event type) as received. */
    status: text('status').notNull(),
    /** The USD amount the gateway reported, null when it reports none. */
    amountCents: integer('amount_cents'),
    transactionId: text('transaction_id').notNull(),
    outcome: text('outcome', { enum: GATEWAY_OUTCOMES }).notNull(),
    receivedAt: text('received_at').notNull(),
    /** `notification`: a vendor's notification (or the generic webhook); `lookup`: the vendor's API, asked. */
    source: text('source', { enum: ['notification', 'lookup'] }).notNull().default('notification'),
  },
  (t) => [
    uniqueIndex('gateway_events_reference_unique').on(t.reference),
    index('gateway_events_received').on(t.receivedAt, t.id),
    index('gateway_events_gateway_received').on(t.gateway, t.receivedAt, t.id),
    index('gateway_events_deposit_received').on(t.depositId, t.receivedAt, t.id),
    index('gateway_events_outcome_received').on(t.outcome, t.receivedAt),
  ],
);

export const EVENT_TYPES = [
  'order.created',
  'order.cancelled',
  'order.completed',
  'deposit.paid',
  'deposit.failed',
  'deposit.expired',
  'balance.adjusted',
  'order.item_replaced',
  'order.item_refunded',
  'order.claim_rejected',
  'order.refunded',
  // Catalogue events: shop-wide, only for endpoints subscribed to them by name (src/services/catalogue/events.ts).
  'product.restocked',
  'product.price_changed',
  'product.unavailable',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The lists that grow with features are tables (migrations/0021_named_lists.sql): a new name is one INSERT in a
 * migration, and the column that takes it references the list. test/db/schema.test.ts keeps each table equal to its
 * TypeScript list.
 */
export const eventTypes = sqliteTable('event_types', { type: text('type').primaryKey() });

export const events = sqliteTable(
  'events',
  {
    seq: integer('seq').primaryKey(),
    id: text('id').notNull(),
    userId: integer('user_id').notNull().references(() => users.id),
    type: text('type', { enum: EVENT_TYPES }).notNull().references(() => eventTypes.type),
    objectId: integer('object_id').notNull(),
    snapshot: text('snapshot').notNull(),
    createdAt: text('created_at').notNull(),
    enqueuedAt: text('enqueued_at'),
  },
  (t) => [
    uniqueIndex('events_id_unique').on(t.id),
    uniqueIndex('events_once_per_object').on(t.type, t.objectId).where(sql`type NOT LIKE 'product.%'`),
    index('events_user_created').on(t.userId, t.createdAt, t.seq),
    index('events_created').on(t.createdAt),
    index('events_outbox').on(t.createdAt).where(sql`enqueued_at IS NULL`),
  ],
);

export const webhookEndpoints = sqliteTable(
  'webhook_endpoints',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id),
    url: text('url').notNull(),
    events: text('events').notNull(),
    description: text('description'),
    secret: text('secret').notNull(),
    createdAt: text('created_at').notNull(),
    deletedAt: text('deleted_at'),
  },
  (t) => [index('webhook_endpoints_user_active').on(t.userId, t.deletedAt)],
);

export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: integer('id').primaryKey(),
    eventId: text('event_id').notNull().references(() => events.id, { onDelete: 'cascade' }),
    endpointId: integer('endpoint_id').notNull().references(() => webhookEndpoints.id),
    attempt: integer('attempt').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    at: text('at').notNull(),
  },
  (t) => [uniqueIndex('webhook_deliveries_attempt_unique').on(t.eventId, t.endpointId, t.attempt), index('webhook_deliveries_at').on(t.at)],
);

export const sessions = sqliteTable(
  'sessions',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id),
    tokenHash: text('token_hash').notNull(),
    createdAt: text('created_at').notNull(),
    lastUsedAt: text('last_used_at').notNull(),
    idleExpiresAt: text('idle_expires_at').notNull(),
    expiresAt: text('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('sessions_token_hash_unique').on(t.tokenHash),
    index('sessions_user').on(t.userId),
    index('sessions_idle_expires').on(t.idleExpiresAt),
  ],
);

export const AUDIT_ACTIONS = [
  'user.created',
  'user.updated',
  'balance.adjusted',
  'product.created',
  'product.updated',
  'stock.added',
  'deposit.marked_paid',
  'password_reset.created',
  'product.image_set',
  'product.image_removed',
  'coupon.created',
  'coupon.updated',
  'deposit.refreshed',
  'order.cancelled',
  'stock.item_deleted',
  'claim.replaced',
  'claim.refunded',
  'claim.rejected',
  'order.refunded',
  'user.held',
  'user.released',
  'blocklist.added',
  'blocklist.removed',
  'settings.invoicing_updated',
  'variant.created',
  'variant.updated',
  'referrals.settings_changed',
  'user.referrals_off',
  'user.referrals_on',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export const auditActions = sqliteTable('audit_actions', { action: text('action').primaryKey() });

export const auditLog = sqliteTable(
  'audit_log',
  {
    id: integer('id').primaryKey(),
    /** 'admin_token' or 'user:<id>' */
    actor: text('actor').notNull(),
    action: text('action', { enum: AUDIT_ACTIONS }).notNull().references(() => auditActions.action),
    target: text('target').notNull(),
    /** JSON object, never a secret */
    details: text('details').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('audit_log_created').on(t.createdAt, t.id)],
);

export const passwordResets = sqliteTable(
  'password_resets',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id),
    tokenHash: text('token_hash').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
  },
  (t) => [uniqueIndex('password_resets_token_hash_unique').on(t.tokenHash), index('password_resets_user').on(t.userId)],
);

/** "Forgot password?" requests per address (src/services/accounts/forgot-password.ts), written whether or not it has an account. */
export const passwordResetRequests = sqliteTable(
  'password_reset_requests',
  {
    /** SHA-256 of the address in lower case. */
    addressHash: text('address_hash').primaryKey(),
    /** JSON array of the last hour's requests let through: '<time> <marker>'. */
    recent: text('recent').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('password_reset_requests_updated').on(t.updatedAt)],
);

export const EMAIL_TEMPLATES = [
  'password_reset',
  'order_receipt',
  'deposit_credited',
  'email_changed',
  'password_changed',
  'email_verification',
  'operator_alert',
  'claim_resolved',
  'order_refunded',
  'claim_opened',
] as const;
export type EmailTemplate = (typeof EMAIL_TEMPLATES)[number];
export const emailTemplates = sqliteTable('email_templates', { template: text('template').primaryKey() });

/** The email outbox: no body and no link token, only what the template needs (migrations/0015_email.sql). */
export const emails = sqliteTable(
  'emails',
  {
    id: text('id').primaryKey(),
    toAddress: text('to_address').notNull(),
    userId: integer('user_id').references(() => users.id),
    template: text('template', { enum: EMAIL_TEMPLATES }).notNull().references(() => emailTemplates.template),
    subject: text('subject').notNull(),
    data: text('data').notNull(),
    carriesLink: integer('carries_link').notNull().default(0),
    status: text('status', { enum: ['queued', 'sent', 'failed'] }).notNull().default('queued'),
    attempts: integer('attempts').notNull().default(0),
    messageId: text('message_id'),
    error: text('error'),
    createdAt: text('created_at').notNull(),
    enqueuedAt: text('enqueued_at'),
    sentAt: text('sent_at'),
  },
  (t) => [
    index('emails_created').on(t.createdAt, t.id),
    index('emails_to_template_created').on(t.toAddress, t.template, t.createdAt),
    index('emails_outbox').on(t.createdAt).where(sql`enqueued_at IS NULL`),
  ],
);

/** Local development only (EMAIL_PREVIEW=true): a sent email's bodies, for the console's Emails page. */
export const emailPreviews = sqliteTable('email_previews', {
  emailId: text('email_id').primaryKey().references(() => emails.id, { onDelete: 'cascade' }),
  textBody: text('text_body').notNull(),
  htmlBody: text('html_body').notNull(),
  createdAt: text('created_at').notNull(),
});

export const emailVerifications = sqliteTable(
  'email_verifications',
  {
    id: integer('id').primaryKey(),
    userId: integer('user_id').notNull().references(() => users.id),
    email: text('email').notNull(),
    tokenHash: text('token_hash').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
  },
  (t) => [uniqueIndex('email_verifications_token_hash_unique').on(t.tokenHash), index('email_verifications_user').on(t.userId)],
);

export const operatorAlerts = sqliteTable(
  'operator_alerts',
  {
    id: integer('id').primaryKey(),
    kind: text('kind', { enum: ['low_stock', 'payment', 'webhook_endpoint'] }).notNull(),
    line: text('line').notNull(),
    createdAt: text('created_at').notNull(),
    /** Set when the line went into an operator_alert email. */
    emailedAt: text('emailed_at'),
  },
  (t) => [index('operator_alerts_kind_emailed').on(t.kind, t.emailedAt)],
);

export type EmailRow = typeof emails.$inferSelect;
/** The last failed call to each slot's payment vendor (the console's payments page); one row per slot. */
export const vendorFailures = sqliteTable('vendor_failures', {
  gateway: text('gateway').primaryKey(),
  provider: text('provider').notNull(),
  /** invoice, lookup or check */
  purpose: text('purpose').notNull(),
  /** timeout, unreachable, http <status>, not json, unexpected answer */
  failure: text('failure').notNull(),
  at: text('at').notNull(),
});

export type OrderRow = typeof orders.$inferSelect;
export type DepositRow = typeof deposits.$inferSelect;
export type TransactionRow = typeof walletTransactions.$inferSelect;
export type ProductRow = typeof products.$inferSelect;
export type GatewayEventRow = typeof gatewayEvents.$inferSelect;
export type EventRow = typeof events.$inferSelect;
export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type AuditRow = typeof auditLog.$inferSelect;

export const coupons = sqliteTable(
  'coupons',
  {
    id: integer('id').primaryKey(),
    /** Upper case, unique. */
    code: text('code').notNull(),
    percentOff: integer('percent_off'),
    amountOffCents: integer('amount_off_cents'),
    minTotalCents: integer('min_total_cents'),
    startsAt: text('starts_at'),
    expiresAt: text('expires_at'),
    maxRedemptions: integer('max_redemptions'),
    /** null = no limit per buyer */
    maxPerUser: integer('max_per_user').default(1),
    /** JSON array of product ids, or null for every product */
    productIds: text('product_ids'),
    active: integer('active').notNull().default(1),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    /** JSON array of variant ids narrowing it, or null for every variant */
    variantIds: text('variant_ids'),
  },
  (t) => [uniqueIndex('coupons_code_unique').on(t.code), index('coupons_created').on(t.createdAt, t.id)],
);

export const couponRedemptions = sqliteTable(
  'coupon_redemptions',
  {
    id: integer('id').primaryKey(),
    couponId: integer('coupon_id').notNull().references(() => coupons.id),
    userId: integer('user_id').notNull().references(() => users.id),
    orderId: integer('order_id').notNull().references(() => orders.id),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('coupon_redemptions_order_unique').on(t.orderId),
    index('coupon_redemptions_coupon_user').on(t.couponId, t.userId),
  ],
);

export type CouponRow = typeof coupons.$inferSelect;

/** A buyer's report of a delivered item within its product's warranty, and how the operator resolved it. */
export const claims = sqliteTable(
  'claims',
  {
    id: integer('id').primaryKey(),
    /** Generated before the report's batch: its reads (and a settle after a fault) find the claim by it. */
    reference: text('reference').notNull(),
    orderId: integer('order_id').notNull().references(() => orders.id),
    userId: integer('user_id').notNull().references(() => users.id),
    itemIndex: integer('item_index').notNull(),
    stockItemId: integer('stock_item_id').notNull().references(() => stockItems.id),
    reason: text('reason').notNull(),
    status: text('status', { enum: ['open', 'replaced', 'refunded', 'rejected'] }).notNull().default('open'),
    /** The operator's note of a rejection, or the line of what was done. */
    resolution: text('resolution'),
    replacementItemId: integer('replacement_item_id').references(() => stockItems.id),
    refundCents: integer('refund_cents'),
    /** Generated before a resolution's batch: says that this very request resolved the claim. */
    resolutionKey: text('resolution_key'),
    createdAt: text('created_at').notNull(),
    resolvedAt: text('resolved_at'),
  },
  (t) => [
    uniqueIndex('claims_reference_unique').on(t.reference),
    uniqueIndex('claims_one_per_item').on(t.stockItemId),
    uniqueIndex('claims_resolution_key_unique').on(t.resolutionKey).where(sql`resolution_key IS NOT NULL`),
    uniqueIndex('claims_one_replacement').on(t.replacementItemId).where(sql`replacement_item_id IS NOT NULL`),
    index('claims_order').on(t.orderId, t.itemIndex),
    index('claims_status_created').on(t.status, t.createdAt, t.id),
  ],
);
export type ClaimRow = typeof claims.$inferSelect;

export const BLOCK_TYPES = ['email', 'email_domain', 'ip', 'country', 'asn'] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];

/** The shop's blocklist: a sign-up, deposit or purchase matching a rule is refused (src/services/accounts/blocklist.ts). */
export const blocklist = sqliteTable(
  'blocklist',
  {
    id: integer('id').primaryKey(),
    type: text('type', { enum: BLOCK_TYPES }).notNull(),
    value: text('value').notNull(),
    /** An ip rule's first and last address, 32 hex digits each (src/lib/ip.ts). */
    rangeStart: text('range_start'),
    rangeEnd: text('range_end'),
    note: text('note'),
    hits: integer('hits').notNull().default(0),
    lastHitAt: text('last_hit_at'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('blocklist_type_value').on(t.type, t.value),
    index('blocklist_ip_ranges').on(t.rangeStart, t.rangeEnd).where(sql`type = 'ip'`),
  ],
);
export type BlockRuleRow = typeof blocklist.$inferSelect;

/** The owner's invoicing settings: one row (migrations/0032_documents.sql). */
export const invoicingSettings = sqliteTable('invoicing_settings', {
  id: integer('id').primaryKey(),
  legalName: text('legal_name').notNull().default(''),
  /** JSON array of lines. */
  address: text('address').notNull().default('[]'),
  country: text('country'),
  taxId: text('tax_id'),
  taxMode: text('tax_mode', { enum: ['none', 'vat'] }).notNull().default('none'),
  /** JSON object: ISO country -> rate in basis points (percent x 100). */
  vatRates: text('vat_rates').notNull().default('{}'),
  updatedAt: text('updated_at').notNull(),
});
export type InvoicingSettingsRow = typeof invoicingSettings.$inferSelect;

/** A buyer's billing details, named on the documents issued to them. */
export const billingDetails = sqliteTable('billing_details', {
  userId: integer('user_id').primaryKey().references(() => users.id),
  name: text('name').notNull(),
  company: text('company'),
  /** JSON array of lines. */
  address: text('address').notNull().default('[]'),
  country: text('country'),
  vatId: text('vat_id'),
  updatedAt: text('updated_at').notNull(),
});
export type BillingDetailsRow = typeof billingDetails.$inferSelect;

export const DOCUMENT_TYPES = ['invoice', 'receipt', 'credit_note'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** Per document type: the numbers test mode's reset deleted (never given again), and when documents began. */
export const documentSequences = sqliteTable('document_sequences', {
  type: text('type', { enum: DOCUMENT_TYPES }).primaryKey(),
  deletedUpTo: integer('deleted_up_to').notNull().default(0),
  startedAt: text('started_at').notNull(),
});

/** Invoices, receipts and credit notes: never changed once issued (src/services/documents/). */
export const documents = sqliteTable(
  'documents',
  {
    id: integer('id').primaryKey(),
    type: text('type', { enum: DOCUMENT_TYPES }).notNull(),
    sequence: integer('sequence').notNull(),
    number: text('number').notNull(),
    userId: integer('user_id').notNull().references(() => users.id),
    /** The document's position among its user's documents (all types; its type): a list's total is their max. */
    userSeq: integer('user_seq').notNull(),
    userTypeSeq: integer('user_type_seq').notNull(),
    walletTransactionId: integer('wallet_transaction_id').notNull().references(() => walletTransactions.id),
    orderId: integer('order_id').references(() => orders.id),
    depositId: integer('deposit_id').references(() => deposits.id),
    correctsId: integer('corrects_id').references((): AnySQLiteColumn => documents.id),
    /** JSON snapshots of the day of issue. */
    seller: text('seller').notNull(),
    buyer: text('buyer').notNull(),
    lines: text('lines').notNull(),
    netAmountCents: integer('net_amount_cents').notNull(),
    taxRateBp: integer('tax_rate_bp').notNull(),
    taxAmountCents: integer('tax_amount_cents').notNull(),
    totalAmountCents: integer('total_amount_cents').notNull(),
    taxNote: text('tax_note'),
    billingCountry: text('billing_country'),
    ipCountry: text('ip_country'),
    issuedAt: text('issued_at').notNull(),
  },
  (t) => [
    uniqueIndex('documents_type_sequence').on(t.type, t.sequence),
    uniqueIndex('documents_one_per_movement').on(t.walletTransactionId),
    uniqueIndex('documents_user_seq').on(t.userId, t.userSeq),
    uniqueIndex('documents_user_type_seq').on(t.userId, t.type, t.userTypeSeq),
    uniqueIndex('documents_one_invoice_per_order').on(t.orderId).where(sql`type = 'invoice'`),
    index('documents_order').on(t.orderId, t.id).where(sql`order_id IS NOT NULL`),
    index('documents_issued').on(t.issuedAt, t.id),
  ],
);
export type DocumentRow = typeof documents.$inferSelect;
/** The shop's referral programme, one row (id 1): percent 0 = off (src/services/referrals/settings.ts). */
export const referralSettings = sqliteTable('referral_settings', {
  id: integer('id').primaryKey(),
  percent: integer('percent').notNull().default(0),
  holdDays: integer('hold_days').notNull().default(14),
  minTransferCents: integer('min_transfer_cents').notNull().default(1000),
  updatedAt: text('updated_at'),
});

/**
 * What referrers earn (src/services/referrals/): an `earning` per order of a referred buyer, an `offset` (negative)
 * per refund that took back a share already moved into the wallet. `pending` rows are not moved yet.
 */
export const referralEarnings = sqliteTable(
  'referral_earnings',
  {
    id: integer('id').primaryKey(),
    referrerId: integer('referrer_id').notNull().references(() => users.id),
    orderId: integer('order_id').notNull().references(() => orders.id),
    kind: text('kind', { enum: ['earning', 'offset'] }).notNull(),
    earnedCents: integer('earned_cents').notNull(),
    amountCents: integer('amount_cents').notNull(),
    status: text('status', { enum: ['pending', 'transferred', 'reversed'] }).notNull(),
    availableAt: text('available_at').notNull(),
    /** The `commission` ledger row that moved it. */
    transactionId: integer('transaction_id'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('referral_earnings_one_per_order').on(t.orderId).where(sql`kind = 'earning'`),
    index('referral_earnings_order').on(t.orderId),
    index('referral_earnings_referrer_created').on(t.referrerId, t.createdAt, t.id),
    index('referral_earnings_held').on(t.referrerId, t.availableAt).where(sql`status = 'pending'`),
    index('referral_earnings_transaction').on(t.transactionId).where(sql`transaction_id IS NOT NULL`),
  ],
);
export type ReferralEarningRow = typeof referralEarnings.$inferSelect;
