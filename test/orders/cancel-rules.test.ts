import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { auditLedger } from '../../src/services/operator/ledger-audit';
import { balanceOf, buy, call, expectError, newProduct, newUser, type TestUser } from '../helpers';

// Cancellation is not a way to take items for free: final-sale products, the cap on cancellations per buyer in any
// 24 hours (MAX_CANCELS_PER_DAY, pinned to 5 in vitest.config.ts), the hold period, and the operator's feed of revoked
// items. Storage is shared by the tests of this file: each makes its own users and products.

const HOUR = 3_600_000;

async function placeOrders(user: TestUser, productId: number, count: number) {
  const orders: Array<{ id: number; order_number: string; cancellable: boolean; stock_items: string[] }> = [];
  for (let i = 0; i < count; i++) {
    const res = await buy(user, productId);
    expect(res.status, res.text).toBe(201);
    orders.push(res.json.data);
  }
  return orders;
}

const cancel = (user: TestUser, orderId: number, vars?: Record<string, string>) => call(`/orders/${orderId}/cancel`, { method: 'POST', key: user.key, vars });

/** What a refused cancel must leave alone: the order, its items, the buyer's money and ledger. */
async function stateOf(user: TestUser, orderId: number) {
  return {
    balance: await balanceOf(user),
    order: await env.DB.prepare('SELECT status, updated_at FROM orders WHERE id = ?').bind(orderId).first(),
    items: (await env.DB.prepare('SELECT status, revoked_at FROM stock_items WHERE order_id = ? ORDER BY id').bind(orderId).all()).results,
    ledger: await env.DB.prepare('SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ?').bind(user.id).first('n'),
  };
}

async function expectRefused(user: TestUser, orderId: number, code: string, vars?: Record<string, string>) {
  const before = await stateOf(user, orderId);
  expectError(await cancel(user, orderId, vars), 400, code);
  expect(await stateOf(user, orderId)).toEqual(before);
}

/** Moves the user's refunds back in time, as if their cancels had happened `hours` ago. */
/** Moves the user's cancellations back in time: the cap counts cancelled orders by when they were cancelled. */
async function ageRefunds(user: TestUser, hours: number) {
  const at = new Date(Date.now() - hours * HOUR).toISOString();
  await env.DB.batch([
    env.DB.prepare("UPDATE wallet_transactions SET created_at = ? WHERE user_id = ? AND type = 'refund'").bind(at, user.id),
    env.DB.prepare("UPDATE orders SET updated_at = ? WHERE user_id = ? AND status = 'cancelled'").bind(at, user.id),
  ]);
}

describe('final sale', () => {
  it('an order of a final-sale product cannot be cancelled, even after the product becomes cancellable', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 3, cancellable: false });
    const [order] = await placeOrders(user, product.id, 1);
    expect(order.cancellable).toBe(false);

    await expectRefused(user, order.id, 'ORDER_NOT_CANCELLABLE');
    const flipped = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { cancellable: true } });
    expect(flipped.status, flipped.text).toBe(200);
    expect(flipped.json.data.cancellable).toBe(true);
    await expectRefused(user, order.id, 'ORDER_NOT_CANCELLABLE');
    expect((await call(`/orders/${order.id}`, { key: user.key })).json.data).toMatchObject({ status: 'pending', cancellable: false });

    // orders placed after the change are cancellable
    const [later] = await placeOrders(user, product.id, 1);
    expect(later.cancellable).toBe(true);
    expect((await cancel(user, later.id)).status).toBe(200);
  });

  it('an order bought while the product was cancellable stays cancellable when the product becomes final sale', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 3 });
    const [order] = await placeOrders(user, product.id, 1);
    expect(order.cancellable).toBe(true);
    const flipped = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { cancellable: false } });
    expect(flipped.json.data.cancellable).toBe(false);
    expect((await call(`/stock/${product.id}`)).json.data.cancellable).toBe(false);

    const res = await cancel(user, order.id);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ refunded_amount: 2, order: { status: 'cancelled', cancellable: true } });
    expect(await balanceOf(user)).toBe(10);
  });

  it('admin product routes take and return cancellable (default true), strictly typed', async () => {
    const created = await call('/admin/products', { admin: true, body: { name: 'Gift card', sku: `GC-${Date.now()}`, price: 10, cancellable: false } });
    expect(created.status, created.text).toBe(201);
    expect(created.json.data.cancellable).toBe(false);
    expect(await env.DB.prepare('SELECT cancellable FROM products WHERE id = ?').bind(created.json.data.id).first('cancellable')).toBe(0);
    const plain = await newProduct();
    expect((await call(`/admin/products/${plain.id}`, { method: 'PATCH', admin: true, body: { name: 'Renamed' } })).json.data.cancellable).toBe(true);
    const bad = await call(`/admin/products/${plain.id}`, { method: 'PATCH', admin: true, body: { cancellable: 'false' } });
    expectError(bad, 422, 'VALIDATION_FAILED');
    expect(bad.json.errors).toHaveProperty('cancellable');
  });
});

describe('the cap on cancellations (MAX_CANCELS_PER_DAY)', () => {
  it('the sixth cancellation in 24 hours is refused and refunds nothing; the window rolls', async () => {
    const user = await newUser({ balance: 20 });
    const product = await newProduct({ price: 1, stock: 8 });
    const orders = await placeOrders(user, product.id, 8);
    for (const order of orders.slice(0, 5)) expect((await cancel(user, order.id)).status).toBe(200);
    expect(await balanceOf(user)).toBe(17);

    await expectRefused(user, orders[5].id, 'CANCEL_LIMIT_REACHED');
    expect(await env.DB.prepare('SELECT status FROM orders WHERE id = ?').bind(orders[5].id).first('status')).toBe('pending');

    // a cancel only leaves the window 24 hours after it happened
    await ageRefunds(user, 23.9);
    await expectRefused(user, orders[5].id, 'CANCEL_LIMIT_REACHED');
    await ageRefunds(user, 24.1);
    expect((await cancel(user, orders[5].id)).status).toBe(200);
    expect(await balanceOf(user)).toBe(18);
  });

  it('an order that is not cancellable anyway answers ORDER_NOT_CANCELLABLE first', async () => {
    const user = await newUser({ balance: 20 });
    const product = await newProduct({ price: 1, stock: 6 });
    const finalSale = await newProduct({ price: 1, stock: 1, cancellable: false });
    const orders = await placeOrders(user, product.id, 6);
    const [gift] = await placeOrders(user, finalSale.id, 1);
    for (const order of orders.slice(0, 5)) expect((await cancel(user, order.id)).status).toBe(200);

    await expectRefused(user, orders[0].id, 'ORDER_NOT_CANCELLABLE'); // already cancelled
    await expectRefused(user, gift.id, 'ORDER_NOT_CANCELLABLE'); // final sale
    await env.DB.prepare("UPDATE orders SET status = 'completed' WHERE id = ?").bind(orders[5].id).run();
    await expectRefused(user, orders[5].id, 'ORDER_NOT_CANCELLABLE'); // completed
    expectError(await cancel(user, 999_999_999), 404, 'NOT_FOUND');
  });

  it('20 concurrent cancels of 20 orders: exactly 5 refunds, the rest refused with nothing changed; the audit holds', async () => {
    const user = await newUser({ balance: 40 });
    const product = await newProduct({ price: 1.5, stock: 20 });
    const orders = await placeOrders(user, product.id, 20);
    expect(await balanceOf(user)).toBe(10);

    const results = await Promise.all(orders.map((order) => cancel(user, order.id)));

    const refunded = results.filter((r) => r.status === 200);
    expect(refunded).toHaveLength(5);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 400, 'CANCEL_LIMIT_REACHED');
    expect(await balanceOf(user)).toBe(17.5);
    const refunds = await env.DB.prepare("SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ? AND type = 'refund'").bind(user.id).first('n');
    expect(refunds).toBe(5);
    const statuses = await env.DB.prepare('SELECT status, count(*) AS n FROM orders WHERE user_id = ? GROUP BY status ORDER BY status').bind(user.id).all();
    expect(statuses.results).toEqual([
      { status: 'cancelled', n: 5 },
      { status: 'pending', n: 15 },
    ]);
    const items = await env.DB.prepare(
      'SELECT s.status, count(*) AS n FROM stock_items s JOIN orders o ON o.id = s.order_id WHERE o.user_id = ? GROUP BY s.status ORDER BY s.status',
    )
      .bind(user.id)
      .all();
    expect(items.results).toEqual([
      { status: 'revoked', n: 5 },
      { status: 'sold', n: 15 },
    ]);
    expect(await auditLedger(env.DB)).toEqual([]);
  });

  it('follows MAX_CANCELS_PER_DAY: 0 allows none, a higher value allows more', async () => {
    const user = await newUser({ balance: 20 });
    const product = await newProduct({ price: 1, stock: 8 });
    const orders = await placeOrders(user, product.id, 8);
    await expectRefused(user, orders[0].id, 'CANCEL_LIMIT_REACHED', { MAX_CANCELS_PER_DAY: '0' });
    for (const order of orders.slice(0, 7)) expect((await cancel(user, order.id, { MAX_CANCELS_PER_DAY: '7' })).status).toBe(200);
    await expectRefused(user, orders[7].id, 'CANCEL_LIMIT_REACHED', { MAX_CANCELS_PER_DAY: '7' });
    await expectRefused(user, orders[7].id, 'CANCEL_LIMIT_REACHED');
  });

  it('counts each buyer on their own', async () => {
    const product = await newProduct({ price: 1, stock: 7 });
    const busy = await newUser({ balance: 10 });
    const other = await newUser({ balance: 10 });
    for (const order of await placeOrders(busy, product.id, 5)) expect((await cancel(busy, order.id)).status).toBe(200);
    const [mine] = await placeOrders(other, product.id, 1);
    expect((await cancel(other, mine.id)).status).toBe(200);
  });
});

describe('the hold period bounds cancellation', () => {
  it('a pending order past ORDER_HOLD_HOURS cannot be cancelled even before the job completes it; 0 leaves it to the job', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 2 });
    const [order] = await placeOrders(user, product.id, 1);
    await env.DB.prepare('UPDATE orders SET created_at = ? WHERE id = ?').bind(new Date(Date.now() - 25 * HOUR).toISOString(), order.id).run();
    await expectRefused(user, order.id, 'ORDER_NOT_CANCELLABLE');
    await expectRefused(user, order.id, 'ORDER_NOT_CANCELLABLE', { ORDER_HOLD_HOURS: '25' });
    expect((await cancel(user, order.id, { ORDER_HOLD_HOURS: '26' })).status).toBe(200);

    const [fresh] = await placeOrders(user, product.id, 1);
    expect((await cancel(user, fresh.id, { ORDER_HOLD_HOURS: '0' })).status).toBe(200);
  });
});

describe('GET /admin/revoked-items', () => {
  it('lists exactly the items of cancelled orders, newest revocation first, with since and pagination', async () => {
    const since = new Date().toISOString();
    const buyers = [await newUser({ balance: 20 }), await newUser({ balance: 20 })];
    const product = await newProduct({ price: 1, stock: 12 });
    const kept = await placeOrders(buyers[0], product.id, 1);
    const expected: Array<Record<string, unknown>> = [];
    for (const [i, buyer] of [buyers[0], buyers[1], buyers[0]].entries()) {
      const res = await buy(buyer, product.id, i + 1);
      expect(res.status, res.text).toBe(201);
      const cancelled = await cancel(buyer, res.json.data.id);
      expect(cancelled.status, cancelled.text).toBe(200);
      const revokedAt = await env.DB.prepare('SELECT updated_at FROM orders WHERE id = ?').bind(res.json.data.id).first<string>('updated_at');
      for (const item of res.json.data.stock_items as string[]) {
        expected.unshift({
          order_id: res.json.data.id,
          order_number: res.json.data.order_number,
          user_id: buyer.id,
          product_id: product.id,
          sku: product.sku,
          item,
          revoked_at: revokedAt,
          reason: 'cancelled',
        });
      }
    }
    const ours = (rows: any[]) => rows.filter((r) => r.product_id === product.id);
    const all = await call(`/admin/revoked-items?since=${since}&per_page=100`, { admin: true });
    expect(all.status, all.text).toBe(200);
    // newest first; items of one order (one revocation) by descending id
    expect(ours(all.json.data)).toEqual(expected);
    expect(ours(all.json.data).map((r) => r.item)).not.toContain(kept[0].stock_items[0]);
    expect(all.json.meta).toMatchObject({ current_page: 1, per_page: 100 });

    // `since` is inclusive; any ISO 8601 offset is understood
    const newest = expected[0].revoked_at as string;
    const recent = await call(`/admin/revoked-items?since=${encodeURIComponent(newest)}`, { admin: true });
    expect(ours(recent.json.data)).toEqual(expected.filter((e) => e.revoked_at === newest));
    const shifted = new Date(Date.parse(newest)).toISOString().replace('Z', '+00:00');
    expect(ours((await call(`/admin/revoked-items?since=${encodeURIComponent(shifted)}`, { admin: true })).json.data)).toEqual(ours(recent.json.data));

    // pages of 2 walk the same list
    const total = (await call(`/admin/revoked-items?since=${since}&per_page=2`, { admin: true })).json.meta.total;
    expect(total).toBeGreaterThanOrEqual(6);
    const walked: any[] = [];
    for (let page = 1; page <= Math.ceil(total / 2); page++) {
      const res = await call(`/admin/revoked-items?since=${since}&per_page=2&page=${page}`, { admin: true });
      expect(res.json.meta).toEqual({ current_page: page, per_page: 2, total, total_pages: Math.ceil(total / 2) });
      walked.push(...res.json.data);
    }
    expect(walked).toEqual(all.json.data);
  });

  it('answers 422 for a malformed since and 401 without the admin token', async () => {
    for (const since of ['yesterday', '2026-11-21', '2026-02-30T00:00:00Z', '2026-11-21T12:00:00', '']) {
      const res = await call(`/admin/revoked-items?since=${encodeURIComponent(since)}`, { admin: true });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors).toHaveProperty('since');
    }
    expectError(await call('/admin/revoked-items'), 401, 'UNAUTHORIZED');
  });
});
