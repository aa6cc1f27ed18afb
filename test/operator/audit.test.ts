import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_CHECKS, auditLedger, type AuditViolation } from '../../src/services/operator/ledger-audit';
import { buy, call, newDeposit, newProduct, newUser, type TestUser } from '../helpers';

// Each check of src/services/operator/ledger-audit.ts must pass on a consistent database and catch its own kind of corruption:
// every case below corrupts the real D1 directly, in one way, asserts exactly which checks then report new rows,
// repairs it and asserts the audit is back where it was.

interface Fixture {
  user: TestUser;
  other: TestUser;
  /** A user without ledger rows. */
  empty: TestUser;
  product: { id: number };
  otherProduct: { id: number };
  cancelled: number;
  pending: number;
  deposit: number;
  /** The item that replaced a reported one (a claim resolved by a replacement). */
  replacement: number;
}

interface Corruption {
  check: string;
  /** Checks that must fire too, because no corruption of this kind can leave them consistent. */
  also?: string[];
  /** SQL to break the database, then SQL to restore it; run with CHECK constraints off when `unchecked`. */
  sql: (f: Fixture) => { corrupt: string[]; repair: string[] };
  unchecked?: boolean;
}

const firstLedgerRow = (userId: number) => `(SELECT min(id) FROM wallet_transactions WHERE user_id = ${userId})`;

const CORRUPTIONS: Corruption[] = [
  {
    check: 'balance equals the sum of the ledger',
    sql: ({ user }) => ({
      corrupt: [`UPDATE users SET balance_cents = balance_cents + 1 WHERE id = ${user.id}`],
      repair: [`UPDATE users SET balance_cents = balance_cents - 1 WHERE id = ${user.id}`],
    }),
  },
  {
    check: 'balance is never negative',
    // A negative balance cannot agree with a valid ledger (whose running balance never goes below zero).
    also: ['balance equals the sum of the ledger'],
    unchecked: true,
    sql: ({ empty }) => ({
      corrupt: [`UPDATE users SET balance_cents = -100 WHERE id = ${empty.id}`],
      repair: [`UPDATE users SET balance_cents = 0 WHERE id = ${empty.id}`],
    }),
  },
  {
    check: 'balance_after chains by ascending id',
    sql: ({ user }) => ({
      corrupt: [`UPDATE wallet_transactions SET balance_after_cents = balance_after_cents + 5 WHERE id = ${firstLedgerRow(user.id)}`],
      repair: [`UPDATE wallet_transactions SET balance_after_cents = balance_after_cents - 5 WHERE id = ${firstLedgerRow(user.id)}`],
    }),
  },
  {
    check: 'stock_count equals the available items',
    sql: ({ product }) => ({
      corrupt: [`UPDATE products SET stock_count = stock_count + 1 WHERE id = ${product.id}`],
      repair: [`UPDATE products SET stock_count = stock_count - 1 WHERE id = ${product.id}`],
    }),
  },
  {
    check: 'every order holds exactly its quantity of items, of its product',
    // One item of the order now belongs to another product: still sold, still counted, but foreign.
    sql: ({ pending, product, otherProduct }) => ({
      corrupt: [`UPDATE stock_items SET product_id = ${otherProduct.id} WHERE order_id = ${pending}`],
      repair: [`UPDATE stock_items SET product_id = ${product.id} WHERE order_id = ${pending}`],
    }),
  },
  {
    check: 'items of cancelled orders are revoked, of other orders sold',
    // A sold item keeping its revocation time breaks the revoked_at rule too.
    also: ['revoked items, and only they, carry revoked_at'],
    unchecked: true,
    sql: ({ cancelled }) => ({
      corrupt: [`UPDATE stock_items SET status = 'sold' WHERE order_id = ${cancelled}`],
      repair: [`UPDATE stock_items SET status = 'revoked' WHERE order_id = ${cancelled}`],
    }),
  },
  {
    check: 'revoked items, and only they, carry revoked_at',
    sql: ({ cancelled }) => ({
      corrupt: [`UPDATE stock_items SET revoked_at = NULL WHERE order_id = ${cancelled}`],
      repair: [`UPDATE stock_items SET revoked_at = (SELECT updated_at FROM orders WHERE id = ${cancelled}) WHERE order_id = ${cancelled}`],
    }),
  },
  {
    check: 'no final-sale order is cancelled',
    sql: ({ cancelled }) => ({
      corrupt: [`UPDATE orders SET cancellable = 0 WHERE id = ${cancelled}`],
      repair: [`UPDATE orders SET cancellable = 1 WHERE id = ${cancelled}`],
    }),
  },
  {
    check: 'order total equals list price times quantity less its discount, and never exceeds unit price times quantity',
    // The discount, not the total: the total is what the ledger rows are checked against.
    unchecked: true,
    sql: ({ pending }) => ({
      corrupt: [`UPDATE orders SET discount_amount_cents = discount_amount_cents + 1 WHERE id = ${pending}`],
      repair: [`UPDATE orders SET discount_amount_cents = discount_amount_cents - 1 WHERE id = ${pending}`],
    }),
  },
  {
    check: 'every order is paid for exactly once, by its total',
    // The debit stays in the ledger (balances still add up) but is no longer the order's purchase.
    sql: ({ pending }) => ({
      corrupt: [`UPDATE wallet_transactions SET type = 'adjustment' WHERE type = 'purchase' AND order_id = ${pending}`],
      repair: [`UPDATE wallet_transactions SET type = 'purchase' WHERE type = 'adjustment' AND order_id = ${pending}`],
    }),
  },
  {
    check: 'no order is refunded beyond its total; its refunds add up to its refunded_amount; a cancelled order is refunded in full',
    sql: ({ cancelled }) => ({
      corrupt: [`UPDATE wallet_transactions SET type = 'adjustment' WHERE type = 'refund' AND order_id = ${cancelled}`],
      repair: [`UPDATE wallet_transactions SET type = 'refund' WHERE type = 'adjustment' AND order_id = ${cancelled}`],
    }),
  },
  {
    check: "a replacement is in its claim's order, in the reported item's place; the reported item is revoked",
    sql: ({ replacement }) => ({
      corrupt: [`UPDATE stock_items SET slot = NULL WHERE id = ${replacement}`],
      repair: [`UPDATE stock_items SET slot = (SELECT c.stock_item_id FROM claims c WHERE c.replacement_item_id = ${replacement}) WHERE id = ${replacement}`],
    }),
  },
  {
    check: 'a deposit is credited at most once, only when paid, by its amount',
    sql: ({ deposit }) => ({
      corrupt: [`UPDATE deposits SET status = 'failed' WHERE id = ${deposit}`],
      repair: [`UPDATE deposits SET status = 'paid' WHERE id = ${deposit}`],
    }),
  },
  {
    check: 'ledger rows belong to the user of their order or deposit',
    // A deposit moved to another user also moves what each user's kept deposit count should be.
    also: ['kept user counts equal the counted ones'],
    sql: ({ deposit, user, other }) => ({
      corrupt: [`UPDATE deposits SET user_id = ${other.id} WHERE id = ${deposit}`],
      repair: [`UPDATE deposits SET user_id = ${user.id} WHERE id = ${deposit}`],
    }),
  },
  {
    check: 'no user has more than 5 active API keys',
    // The user has one key; five more rows make six active ones.
    sql: ({ other }) => ({
      corrupt: [
        `INSERT INTO api_keys (user_id, name, key_hash, key_preview, created_at)
         SELECT ${other.id}, 'audit', 'audit-test-' || ${other.id} || '-' || value, 'sk_live_…', '2026-01-01T00:00:00.000Z'
         FROM json_each('[1,2,3,4,5]')`,
      ],
      repair: [`DELETE FROM api_keys WHERE key_hash LIKE 'audit-test-${other.id}-%'`],
    }),
  },
  {
    check: 'kept user counts equal the counted ones',
    sql: ({ user }) => ({
      corrupt: [`UPDATE user_counts SET pending_orders = pending_orders + 1 WHERE user_id = ${user.id}`],
      repair: [`UPDATE user_counts SET pending_orders = pending_orders - 1 WHERE user_id = ${user.id}`],
    }),
  },
  {
    check: 'kept key spending per day equals the family orders of that day',
    sql: ({ pending }) => ({
      corrupt: [`UPDATE api_key_spend_days SET spent_cents = spent_cents + 1 WHERE api_key_id = (SELECT api_key_id FROM orders WHERE id = ${pending})`],
      repair: [`UPDATE api_key_spend_days SET spent_cents = spent_cents - 1 WHERE api_key_id = (SELECT api_key_id FROM orders WHERE id = ${pending})`],
    }),
  },
];

const rowKeys = (violations: AuditViolation[]) => new Set(violations.flatMap((v) => v.rows.map((row) => `${v.check}: ${JSON.stringify(row)}`)));

/** Names of the checks reporting rows that were not reported before. */
function newlyFailing(before: AuditViolation[], after: AuditViolation[]): string[] {
  const known = rowKeys(before);
  return after.filter((v) => v.rows.some((row) => !known.has(`${v.check}: ${JSON.stringify(row)}`))).map((v) => v.check).sort();
}

async function run(statements: string[], unchecked = false) {
  // CHECK constraints are the schema's own backstop; some corruptions must get past them to reach the audit.
  if (unchecked) await env.DB.exec('PRAGMA ignore_check_constraints = ON');
  try {
    for (const statement of statements) await env.DB.prepare(statement).run();
  } finally {
    if (unchecked) await env.DB.exec('PRAGMA ignore_check_constraints = OFF');
  }
}

describe('auditLedger', () => {
  let fixture: Fixture;

  beforeAll(async () => {
    const [user, other, empty] = [await newUser({ balance: 20 }), await newUser(), await newUser()];
    const product = await newProduct({ price: 1.25, stock: 6 });
    const otherProduct = await newProduct({ price: 2 });
    const cancelled = (await buy(user, product.id, 2)).json.data.id;
    const pending = (await buy(user, product.id, 1)).json.data.id;
    expect((await call(`/orders/${cancelled}/cancel`, { key: user.key, method: 'POST' })).status).toBe(200);
    const deposit = (await newDeposit(user, { amount: 5 })).deposit_id;
    expect((await call(`/admin/deposits/${deposit}/mark-paid`, { admin: true, method: 'POST' })).status).toBe(200);
    // A warranty claim replaced, and a partial refund by the operator.
    const warrantied = await newProduct({ price: 1, stock: 2 });
    expect((await call(`/admin/products/${warrantied.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: 24 } })).status).toBe(200);
    const bought = (await buy(user, warrantied.id, 1)).json.data.id;
    const claim = await call(`/orders/${bought}/items/0/report`, { key: user.key, body: { reason: 'does not work' } });
    expect(claim.status, claim.text).toBe(201);
    expect((await call(`/admin/claims/${claim.json.data.id}/replace`, { admin: true, method: 'POST' })).status).toBe(200);
    expect((await call(`/admin/orders/${pending}/refund`, { admin: true, body: { amount: 0.25, reason: 'goodwill' } })).status).toBe(200);
    const replacement = (await env.DB.prepare('SELECT replacement_item_id AS id FROM claims WHERE id = ?').bind(claim.json.data.id).first<{ id: number }>())!.id;
    fixture = { user, other, empty, product, otherProduct, cancelled, pending, deposit, replacement };
  });

  it('passes after real activity: purchases, a cancel with refund, a paid deposit', async () => {
    expect(await auditLedger(env.DB)).toEqual([]);
  });

  it('has a corruption case below for every one of its checks', () => {
    expect(CORRUPTIONS.map((c) => c.check).sort()).toEqual(AUDIT_CHECKS.map((c) => c.name).sort());
  });

  it.each(CORRUPTIONS.map((c) => [c.check, c] as const))('catches a break of "%s"', async (_name, corruption) => {
    const { corrupt, repair } = corruption.sql(fixture);
    const before = await auditLedger(env.DB);
    await run(corrupt, corruption.unchecked);
    const after = await auditLedger(env.DB);
    await run(repair, corruption.unchecked);
    expect(newlyFailing(before, after)).toEqual([corruption.check, ...(corruption.also ?? [])].sort());
    expect(newlyFailing(before, await auditLedger(env.DB)), 'after the repair').toEqual([]);
  });
});
