import { applyD1Migrations, env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { auditLedger } from '../../src/services/operator/ledger-audit';

// Every migration applies to a database that already holds data. The suite's databases are migrated empty, where
// rebuilding a table is always easy; production has rows, and a rebuild of a table other tables reference (orders is
// referenced by stock_items, wallet_transactions and coupon_redemptions) breaks their foreign keys unless the rows come
// back into a table of that name before the migration commits. Here the migrations are applied one at a time, and
// after the one that creates a table, rows are written into it as the service of that time would have.

const T = '2026-01-01T00:00:00.000Z';
const T2 = '2026-01-02T10:00:00.000Z';

/** Rows written right after the named migration, in the columns that migration's schema has. */
const ROWS_AFTER: Record<string, string[]> = {
  '0001_init.sql': [
    `INSERT INTO users (id, name, email, password_hash, balance_cents, created_at, updated_at) VALUES (1, 'Ann', 'ann@example.com', 'x', 1000, '${T}', '${T}')`,
    `INSERT INTO api_keys (id, user_id, name, key_hash, key_preview, created_at) VALUES (1, 1, 'main', 'hash', 'sk_live_****abcd', '${T}')`,
    `INSERT INTO products (id, name, sku, price_cents, stock_count, created_at, updated_at) VALUES (1, 'Code', 'CODE', 250, 1, '${T}', '${T}')`,
    `INSERT INTO orders (id, order_number, user_id, product_id, product_name, quantity, unit_price_cents, total_amount_cents, status, created_at, updated_at)
     VALUES (1, 'ORD-1', 1, 1, 'Code', 2, 250, 500, 'pending', '${T}', '${T}'), (2, 'ORD-2', 1, 1, 'Code', 1, 250, 250, 'cancelled', '${T}', '${T}')`,
    `INSERT INTO stock_items (id, product_id, content, status, order_id, created_at)
     VALUES (1, 1, 'A', 'sold', 1, '${T}'), (2, 1, 'B', 'sold', 1, '${T}'), (3, 1, 'C', 'revoked', 2, '${T}'), (4, 1, 'D', 'available', NULL, '${T}')`,
    `INSERT INTO deposits (id, user_id, amount_cents, gateway, status, expires_at, paid_at, created_at, updated_at)
     VALUES (1, 1, 1500, 'gateway_one', 'paid', '${T}', '${T}', '${T}', '${T}')`,
    `INSERT INTO wallet_transactions (id, user_id, type, amount_cents, balance_after_cents, description, order_id, deposit_id, operation_id, created_at) VALUES
     (1, 1, 'deposit', 1500, 1500, 'Deposit', NULL, 1, 'op-1', '${T}'),
     (2, 1, 'purchase', -500, 1000, 'Purchase ORD-1', 1, NULL, 'op-2', '${T}'),
     (3, 1, 'purchase', -250, 750, 'Purchase ORD-2', 2, NULL, 'op-3', '${T}'),
     (4, 1, 'refund', 250, 1000, 'Refund ORD-2', 2, NULL, 'op-4', '${T}')`,
  ],
  '0005_operator_surface.sql': [
    `INSERT INTO gateway_events (id, reference, gateway, deposit_id, status, amount_cents, transaction_id, outcome, received_at)
     VALUES (1, 'ref-1', 'gateway_one', 1, 'paid', 1500, 'tx-1', 'credited', '${T}')`,
  ],
  '0006_events_and_webhooks.sql': [
    `INSERT INTO events (seq, id, user_id, type, object_id, snapshot, created_at) VALUES (1, 'evt_1', 1, 'order.created', 1, '{}', '${T}')`,
    `INSERT INTO webhook_endpoints (id, user_id, url, events, secret, created_at) VALUES (1, 1, 'https://example.com/hook', '["*"]', 'whsec_x', '${T}')`,
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, attempt, status_code, at) VALUES (1, 'evt_1', 1, 1, 200, '${T}')`,
  ],
  '0010_operator_console.sql': [
    `INSERT INTO audit_log (id, actor, action, target, details, created_at) VALUES (1, 'admin_token', 'product.created', 'product:1', '{}', '${T}')`,
  ],
  '0015_email.sql': [
    `INSERT INTO emails (id, to_address, user_id, template, subject, data, created_at) VALUES ('em_1', 'ann@example.com', 1, 'order_receipt', 'Receipt', '{}', '${T}')`,
  ],
  // A key made by key 1, and an order through each of the two on a later day: key 1's family spent both that day.
  '0022_key_families.sql': [
    `INSERT INTO api_keys (id, user_id, name, key_hash, key_preview, created_at, created_by_key_id, ancestry)
     VALUES (2, 1, 'child', 'hash-2', 'sk_live_****efgh', '${T}', 1, '/1/')`,
    `INSERT INTO orders (id, order_number, user_id, product_id, product_name, quantity, unit_price_cents, list_unit_price_cents,
                         total_amount_cents, status, created_at, updated_at, api_key_id)
     VALUES (3, 'ORD-3', 1, 1, 'Code', 1, 250, 250, 250, 'completed', '${T2}', '${T2}', 2),
            (4, 'ORD-4', 1, 1, 'Code', 1, 250, 250, 250, 'pending', '${T2}', '${T2}', 1)`,
    `INSERT INTO stock_items (id, product_id, content, status, order_id, created_at) VALUES (5, 1, 'E', 'sold', 3, '${T}'), (6, 1, 'F', 'sold', 4, '${T}')`,
    `INSERT INTO wallet_transactions (id, user_id, type, amount_cents, balance_after_cents, description, order_id, deposit_id, operation_id, created_at) VALUES
     (5, 1, 'purchase', -250, 750, 'Purchase ORD-3', 3, NULL, 'op-5', '${T2}'),
     (6, 1, 'purchase', -250, 500, 'Purchase ORD-4', 4, NULL, 'op-6', '${T2}')`,
    `UPDATE users SET balance_cents = 500 WHERE id = 1`,
  ],
  '0017_prices.sql': [
    `INSERT INTO coupons (id, code, percent_off, created_at, updated_at) VALUES (1, 'SPRING', 10, '${T}', '${T}')`,
    `INSERT INTO coupon_redemptions (id, coupon_id, user_id, order_id, created_at) VALUES (1, 1, 1, 1, '${T}')`,
  ],
  // A product with a warranty: 0034 gives its orders the warranty it has when they gain the column.
  '0025_after_the_sale.sql': [`UPDATE products SET warranty_hours = 72 WHERE id = 1`],
};

const TABLES = ['users', 'api_keys', 'products', 'orders', 'stock_items', 'deposits', 'wallet_transactions', 'gateway_events',
  'events', 'webhook_endpoints', 'webhook_deliveries', 'audit_log', 'coupons', 'coupon_redemptions', 'emails'];

describe('the migrations, applied one by one to a database with data', () => {
  it('each applies, and every row and reference survives', async () => {
    const db = env.UPGRADE_DB;
    const migrations = env.TEST_MIGRATIONS;
    const written: Record<string, number> = {};
    for (let i = 0; i < migrations.length; i++) {
      const { name } = migrations[i];
      await applyD1Migrations(db, migrations.slice(0, i + 1)).catch((error: Error) => {
        throw new Error(`${name} does not apply to a database with data: ${error.message}`);
      });
      for (const statement of ROWS_AFTER[name] ?? []) await db.prepare(statement).run();
    }
    expect(Object.keys(ROWS_AFTER).every((name) => migrations.some((m) => m.name === name))).toBe(true);

    for (const table of TABLES) {
      const row = await db.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>();
      written[table] = row!.n;
    }
    expect(written).toEqual({
      users: 1, api_keys: 2, products: 1, orders: 4, stock_items: 6, deposits: 1, wallet_transactions: 6, gateway_events: 1,
      events: 1, webhook_endpoints: 1, webhook_deliveries: 1, audit_log: 1, coupons: 1, coupon_redemptions: 1, emails: 1,
    });
    expect((await db.prepare('PRAGMA foreign_key_check').all()).results).toEqual([]);
    // Orders from before prices paid their list price.
    expect(await db.prepare('SELECT list_unit_price_cents, discount_amount_cents, coupon FROM orders WHERE id = 1').first()).toEqual({
      list_unit_price_cents: 250,
      discount_amount_cents: 0,
      coupon: null,
    });
    expect(await auditLedger(db)).toEqual([]);
    // 0030 kept what the lists and the spend limit used to count: the user's totals, each key family's day.
    expect(await db.prepare('SELECT * FROM user_counts').all().then((r) => r.results)).toEqual([
      { user_id: 1, orders_count: 4, pending_orders: 2, spent_cents: 1000, transactions_count: 6, deposits_count: 1 },
    ]);
    expect(await db.prepare('SELECT api_key_id, day, spent_cents FROM api_key_spend_days ORDER BY api_key_id').all().then((r) => r.results)).toEqual([
      { api_key_id: 1, day: '2026-01-02', spent_cents: 500 },
      { api_key_id: 2, day: '2026-01-02', spent_cents: 250 },
    ]);
    // Warranty is the order's (0034): the orders bought before it keep their product's.
    expect((await db.prepare('SELECT DISTINCT warranty_hours FROM orders WHERE product_id = 1').all()).results).toEqual([{ warranty_hours: 72 }]);

    // Variants (0031): the product got its `Standard` variant with its sku, price and stock; its items, and its
    // orders, moved to it; the product's columns are unchanged.
    const variant = await db.prepare('SELECT id, product_id, name, sku, price_cents, stock_count, active FROM product_variants').all();
    expect(variant.results).toEqual([{ id: expect.any(Number), product_id: 1, name: 'Standard', sku: 'CODE', price_cents: 250, stock_count: 1, active: 1 }]);
    const standardId = (variant.results[0] as { id: number }).id;
    expect((await db.prepare('SELECT DISTINCT variant_id FROM stock_items').all()).results).toEqual([{ variant_id: standardId }]);
    expect((await db.prepare('SELECT DISTINCT variant_id, variant_name FROM orders').all()).results).toEqual([{ variant_id: standardId, variant_name: 'Standard' }]);
    expect(await db.prepare('SELECT sku, price_cents, stock_count, active_variants FROM products WHERE id = 1').first()).toEqual({
      sku: 'CODE',
      price_cents: 250,
      stock_count: 1,
      active_variants: 1,
    });
    // 0033 (referrals) gave the user already there a code, and rebuilt the ledger keeping its rows, which now take
    // `commission` (a credit only) beside the other types.
    expect((await db.prepare('SELECT referral_code FROM users WHERE id = 1').first<{ referral_code: string }>())!.referral_code).toMatch(/^[0-9A-F]{16}$/);
    const commission = (amount: number, id: string) =>
      db.prepare(`INSERT INTO wallet_transactions (user_id, type, amount_cents, balance_after_cents, description, operation_id, created_at)
                  VALUES (1, 'commission', ${amount}, 2000, 'moved', '${id}', '${T}')`);
    await expect(commission(-5, 'op-c0').run()).rejects.toThrow(/CHECK/);
    await commission(5, 'op-c1').run();
    await db.prepare(`DELETE FROM wallet_transactions WHERE operation_id = 'op-c1'`).run();

    // The named lists (0021): the database refuses a name it does not list, and a migration that lists a new one is an
    // INSERT, with every existing row untouched.
    const newAudit = db.prepare(`INSERT INTO audit_log (actor, action, target, details, created_at) VALUES ('admin_token', 'x.tested', 'x:1', '{}', '${T}')`);
    await expect(newAudit.run()).rejects.toThrow(/FOREIGN KEY/);
    await db.prepare(`INSERT INTO audit_actions (action) VALUES ('x.tested')`).run();
    await newAudit.run();
    expect(await db.prepare('SELECT count(*) AS n FROM audit_log').first()).toEqual({ n: 2 });
  });
});
