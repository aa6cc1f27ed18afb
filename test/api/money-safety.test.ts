import { env } from 'cloudflare:test';
import { SELF } from '../contract';
import { captureLogs } from '../logs';
import { describe, expect, it } from 'vitest';
import { balanceOf, BASE, call, expectError, newProduct, newUser, type TestUser } from '../helpers';

// Real concurrency: every request goes through the worker's fetch handler at the same time (Promise.all), so the
// purchase and cancel batches interleave against the same local D1.

interface Result {
  status: number;
  json: any;
}

async function fire(user: TestUser, path: string, body?: unknown): Promise<Result> {
  const res = await SELF.fetch(`${BASE}${path}`, {
    method: 'POST',
    headers: { 'X-API-Key': user.key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const purchaseOnce = (user: TestUser, productId: number, quantity = 1) => fire(user, '/orders', { product_id: productId, quantity });

/** Ledger invariants of one user, read straight from D1. */
async function expectLedgerConsistent(userId: number) {
  const user = await env.DB.prepare('SELECT balance_cents FROM users WHERE id = ?').bind(userId).first<{ balance_cents: number }>();
  const { results } = await env.DB.prepare('SELECT id, amount_cents, balance_after_cents FROM wallet_transactions WHERE user_id = ? ORDER BY id')
    .bind(userId)
    .all<{ id: number; amount_cents: number; balance_after_cents: number }>();
  const sum = results.reduce((acc, r) => acc + r.amount_cents, 0);
  expect(user!.balance_cents, `user ${userId}: balance == sum of ledger`).toBe(sum);
  let running = 0;
  for (const row of results) {
    running += row.amount_cents;
    expect(row.balance_after_cents, `user ${userId}: balance_after of transaction ${row.id}`).toBe(running);
    expect(row.balance_after_cents).toBeGreaterThanOrEqual(0);
  }
  expect(user!.balance_cents).toBeGreaterThanOrEqual(0);
}

/** Product invariants: stock_count == available items; every non-available item belongs to exactly one order. */
async function expectStockConsistent(productId: number) {
  const product = await env.DB.prepare('SELECT stock_count FROM products WHERE id = ?').bind(productId).first<{ stock_count: number }>();
  const available = await env.DB.prepare("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'")
    .bind(productId)
    .first<{ n: number }>();
  expect(product!.stock_count).toBe(available!.n);
  // every order of the product holds exactly `quantity` items
  const { results } = await env.DB.prepare(
    `SELECT o.id, o.quantity, (SELECT count(*) FROM stock_items s WHERE s.order_id = o.id) AS items
     FROM orders o WHERE o.product_id = ?`,
  )
    .bind(productId)
    .all<{ id: number; quantity: number; items: number }>();
  for (const o of results) expect(o.items, `order ${o.id}`).toBe(o.quantity);
}

describe('money safety under concurrency', () => {
  it('a user funded for exactly 10 items gets exactly 10 out of 40 concurrent purchases', async () => {
    const user = await newUser({ balance: 12.3 }); // 10 x 1.23
    const product = await newProduct({ price: 1.23, stock: 40 });

    const results = await Promise.all(Array.from({ length: 40 }, () => purchaseOnce(user, product.id)));

    const created = results.filter((r) => r.status === 201);
    const failed = results.filter((r) => r.status !== 201);
    expect(created).toHaveLength(10);
    expect(failed).toHaveLength(30);
    for (const r of failed) {
      expect(r.status, JSON.stringify(r.json)).toBe(400);
      expect(r.json.success).toBe(false);
      expect(['INSUFFICIENT_BALANCE', 'INSUFFICIENT_STOCK']).toContain(r.json.code);
    }
    // stock was plentiful: the balance is what ran out
    expect(failed.filter((r) => r.json.code === 'INSUFFICIENT_BALANCE').length).toBeGreaterThan(0);

    const items = created.flatMap((r) => r.json.data.stock_items as string[]);
    expect(items).toHaveLength(10);
    expect(new Set(items).size).toBe(10);
    expect(new Set(created.map((r) => r.json.data.id)).size).toBe(10);

    expect(await balanceOf(user)).toBe(0);
    const db = await env.DB.prepare(
      `SELECT (SELECT balance_cents FROM users WHERE id = ?1) AS balance,
              (SELECT count(*) FROM orders WHERE user_id = ?1) AS orders,
              (SELECT count(*) FROM wallet_transactions WHERE user_id = ?1 AND type = 'purchase') AS purchases,
              (SELECT stock_count FROM products WHERE id = ?2) AS stock`,
    )
      .bind(user.id, product.id)
      .first();
    expect(db).toEqual({ balance: 0, orders: 10, purchases: 10, stock: 30 });

    await expectLedgerConsistent(user.id);
    await expectStockConsistent(product.id);
  });

  it('60 concurrent purchases by 5 users against 25 items deliver exactly 25 items, none twice', async () => {
    const users = await Promise.all(Array.from({ length: 5 }, () => newUser({ balance: 50 })));
    const product = await newProduct({ price: 1, stock: 25 });

    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => purchaseOnce(users[i % users.length], product.id)));

    const created = results.filter((r) => r.status === 201);
    const failed = results.filter((r) => r.status !== 201);
    expect(created).toHaveLength(25);
    for (const r of failed) {
      expectError({ status: r.status, json: r.json }, 400, 'INSUFFICIENT_STOCK');
    }

    const delivered = created.flatMap((r) => r.json.data.stock_items as string[]);
    expect(delivered).toHaveLength(25);
    expect(new Set(delivered).size).toBe(25);

    const { results: items } = await env.DB.prepare('SELECT content, status, order_id FROM stock_items WHERE product_id = ?')
      .bind(product.id)
      .all<{ content: string; status: string; order_id: number | null }>();
    expect(items).toHaveLength(25);
    expect(items.every((i) => i.status === 'sold' && i.order_id !== null)).toBe(true);
    expect(new Set(items.map((i) => i.content))).toEqual(new Set(delivered));
    // each sold item is attached to the order that delivered it, and to one order only
    const deliveredBy = new Map<string, number>();
    for (const r of created) for (const item of r.json.data.stock_items) deliveredBy.set(item, r.json.data.id);
    for (const i of items) expect(i.order_id).toBe(deliveredBy.get(i.content));

    const stock = await env.DB.prepare("SELECT stock_count, (SELECT count(*) FROM stock_items WHERE product_id = ?1 AND status = 'available') AS available FROM products WHERE id = ?1")
      .bind(product.id)
      .first();
    expect(stock).toEqual({ stock_count: 0, available: 0 });

    // money: every user paid exactly for the orders they got
    let spent = 0;
    for (const [index, u] of users.entries()) {
      const mine = results.filter((r, i) => i % users.length === index && r.status === 201).length;
      const bal = await balanceOf(u);
      expect(bal).toBe(50 - mine);
      spent += 50 - bal;
      await expectLedgerConsistent(u.id);
    }
    expect(spent).toBe(25);
    await expectStockConsistent(product.id);
  });

  it('ten concurrent cancels of one order: exactly one refund', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 3.33, stock: 2 });
    const order = await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 2 } });
    expect(order.status, order.text).toBe(201);
    const orderId = order.json.data.id;
    expect(await balanceOf(user)).toBe(3.34);

    const results = await Promise.all(Array.from({ length: 10 }, () => fire(user, `/orders/${orderId}/cancel`)));

    const okResults = results.filter((r) => r.status === 200);
    expect(okResults).toHaveLength(1);
    expect(okResults[0].json.data.refunded_amount).toBe(6.66);
    const rejected = results.filter((r) => r.status !== 200);
    expect(rejected).toHaveLength(9);
    for (const r of rejected) expectError({ status: r.status, json: r.json }, 400, 'ORDER_NOT_CANCELLABLE');

    expect(await balanceOf(user)).toBe(10);
    const refunds = await env.DB.prepare("SELECT amount_cents FROM wallet_transactions WHERE order_id = ? AND type = 'refund'")
      .bind(orderId)
      .all();
    expect(refunds.results).toEqual([{ amount_cents: 666 }]);
    expect(await env.DB.prepare('SELECT status FROM orders WHERE id = ?').bind(orderId).first('status')).toBe('cancelled');
    await expectLedgerConsistent(user.id);
  });

  it('concurrent purchases and cancels by one user keep the ledger chained and equal to the balance', async () => {
    const user = await newUser({ balance: 20 });
    const product = await newProduct({ price: 0.99, stock: 30 });
    const first = await Promise.all(Array.from({ length: 8 }, () => purchaseOnce(user, product.id)));
    const ids = first.filter((r) => r.status === 201).map((r) => r.json.data.id as number);
    expect(ids).toHaveLength(8);

    // cancel half of them while buying more, all at once
    const mixed = await Promise.all([
      ...ids.slice(0, 4).map((id) => fire(user, `/orders/${id}/cancel`)),
      ...Array.from({ length: 8 }, () => purchaseOnce(user, product.id)),
    ]);
    expect(mixed.slice(0, 4).every((r) => r.status === 200)).toBe(true);
    const bought = 8 + mixed.slice(4).filter((r) => r.status === 201).length;
    const cancelled = 4;

    const balanceCents = Math.round((await balanceOf(user)) * 100);
    expect(balanceCents).toBe(2000 - (bought - cancelled) * 99);
    await expectLedgerConsistent(user.id);
    await expectStockConsistent(product.id);
  });

  it('a batch that would claim too few items rolls back completely: no debit, no order, no ledger row', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 2 });
    // Corrupt the denormalised counter: it claims 5 available items while only 2 exist.
    await env.DB.prepare('UPDATE products SET stock_count = 5 WHERE id = ?').bind(product.id).run();

    const state = () =>
      env.DB.prepare(
        `SELECT (SELECT balance_cents FROM users WHERE id = ?1) AS balance,
                (SELECT count(*) FROM orders WHERE user_id = ?1) AS orders,
                (SELECT count(*) FROM wallet_transactions WHERE user_id = ?1) AS ledger,
                (SELECT stock_count FROM products WHERE id = ?2) AS stock_count,
                (SELECT count(*) FROM stock_items WHERE product_id = ?2 AND status = 'available') AS available`,
      )
        .bind(user.id, product.id)
        .first();
    const before = await state();
    expect(before).toEqual({ balance: 1000, orders: 0, ledger: 1, stock_count: 5, available: 2 });

    // The 500, if that is the answer, is logged on purpose: captured and checked (test/logs.ts), not printed.
    const logs = captureLogs();
    const res = await purchaseOnce(user, product.id, 4).finally(logs.stop);
    if (res.status === 500) expect(logs.lines).toContainEqual(expect.objectContaining({ level: 'error', route: '/api/v2/orders' }));
    expect(JSON.stringify(logs.lines)).not.toContain(user.key);
    // Only a corrupted counter gets here, so the contract's "anything unexpected" 500 is acceptable, as is a 400
    // INSUFFICIENT_STOCK; either way the body must not leak SQL and nothing may have been written.
    const body = JSON.stringify(res.json);
    expect([400, 500], body).toContain(res.status);
    expect(res.json).toMatchObject({ success: false, code: res.status === 400 ? 'INSUFFICIENT_STOCK' : 'INTERNAL_ERROR' });
    expect(body).not.toMatch(/D1_ERROR|SQLITE|CHECK constraint|stack/i);
    expect(await state()).toEqual(before);
    expect(await balanceOf(user)).toBe(10);
    await expectLedgerConsistent(user.id);

    // the two real items can still be bought afterwards
    const okRes = await purchaseOnce(user, product.id, 2);
    expect(okRes.status, JSON.stringify(okRes.json)).toBe(201);
    expect(okRes.json.data.stock_items).toHaveLength(2);
    expect(await balanceOf(user)).toBe(8);
    await expectLedgerConsistent(user.id);
  });
});
