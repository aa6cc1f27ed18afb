import { env } from 'cloudflare:test';
import { SELF } from '../contract';
import { describe, expect, it } from 'vitest';
import { balanceOf, BASE, buy, call, expectError, newProduct, newUser, restock, unique, type TestUser } from '../helpers';

// ---------------------------------------------------------------------------------------------------------------
// Local helpers: observable state of one user and one product, read through the API and straight from D1.
// ---------------------------------------------------------------------------------------------------------------

async function stockCount(productId: number): Promise<number> {
  const res = await call(`/stock/${productId}`);
  expect(res.status, res.text).toBe(200);
  return res.json.data.stock_count;
}

async function dbCount(sql: string, ...params: unknown[]): Promise<number> {
  const row = await env.DB.prepare(sql)
    .bind(...params)
    .first<{ n: number }>();
  return row!.n;
}

interface Snapshot {
  balance: number;
  stockCount: number;
  orders: number;
  ledger: number;
  available: number;
}

async function snapshot(user: TestUser, productId: number): Promise<Snapshot> {
  return {
    balance: await balanceOf(user),
    stockCount: await stockCount(productId),
    orders: await dbCount('SELECT count(*) AS n FROM orders WHERE user_id = ?', user.id),
    ledger: await dbCount('SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ?', user.id),
    available: await dbCount("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'", productId),
  };
}

/** Runs `action` and asserts that nothing about the user's money, orders or the product's stock changed. */
async function expectNothingChanged<T>(user: TestUser, productId: number, action: () => Promise<T>): Promise<T> {
  const before = await snapshot(user, productId);
  const result = await action();
  expect(await snapshot(user, productId)).toEqual(before);
  return result;
}

async function placeOrder(user: TestUser, productId: number, quantity = 1) {
  const res = await buy(user, productId, quantity);
  expect(res.status, res.text).toBe(201);
  return res.json.data as { id: number; order_number: string; total_amount: number; stock_items: string[] };
}

// ---------------------------------------------------------------------------------------------------------------
// POST /orders
// ---------------------------------------------------------------------------------------------------------------

describe('POST /orders', () => {
  it('creates a pending order, debits the wallet, writes a purchase ledger row and decrements stock', async () => {
    const user = await newUser({ balance: 20 });
    const product = await newProduct({ price: 2.5, stock: 5 });
    const stockBefore = await stockCount(product.id);
    expect(stockBefore).toBe(5);

    const res = await buy(user, product.id, 3);
    expect(res.status, res.text).toBe(201);
    expect(res.json.success).toBe(true);
    expect(typeof res.json.message).toBe('string');
    const order = res.json.data;
    expect(order).toMatchObject({
      product_id: product.id,
      product_name: product.name,
      quantity: 3,
      unit_price: 2.5,
      total_amount: 7.5,
      status: 'pending',
    });
    expect(Number.isInteger(order.id)).toBe(true);
    expect(typeof order.order_number).toBe('string');
    expect(order.order_number.length).toBeGreaterThan(0);
    expect(order.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(order.stock_items).toHaveLength(3);
    expect(Object.keys(order).sort()).toEqual(
      ['id', 'order_number', 'product_id', 'product_name', 'variant_id', 'variant_name', 'quantity', 'unit_price', 'total_amount', 'list_unit_price', 'discount_amount', 'coupon', 'refunded_amount', 'coupon_amount', 'status', 'cancellable', 'created_at', 'stock_items'].sort(),
    );

    expect(await balanceOf(user)).toBe(12.5);
    expect(await stockCount(product.id)).toBe(stockBefore - 3);

    const tx = await call('/wallet/transactions', { key: user.key });
    expect(tx.status, tx.text).toBe(200);
    const purchases = tx.json.data.filter((t: any) => t.type === 'purchase');
    expect(purchases).toHaveLength(1);
    expect(purchases[0].amount).toBe(-7.5);
    expect(purchases[0].balance_after).toBe(12.5);
    // newest first: the purchase is the latest movement
    expect(tx.json.data[0].type).toBe('purchase');

    const ledger = await env.DB.prepare("SELECT amount_cents, balance_after_cents FROM wallet_transactions WHERE order_id = ? AND type = 'purchase'")
      .bind(order.id)
      .all<{ amount_cents: number; balance_after_cents: number }>();
    expect(ledger.results).toEqual([{ amount_cents: -750, balance_after_cents: 1250 }]);
  });

  it('delivers the oldest available items first (FIFO), each item only once', async () => {
    const user = await newUser({ balance: 50 });
    const product = await newProduct({ price: 1 });
    const items = await restock(product.id, 6);

    const first = await placeOrder(user, product.id, 2);
    expect(first.stock_items).toEqual(items.slice(0, 2));
    const second = await placeOrder(user, product.id, 3);
    expect(second.stock_items).toEqual(items.slice(2, 5));

    // items added later are sold after the older remaining one
    const later = await restock(product.id, 2);
    const third = await placeOrder(user, product.id, 2);
    expect(third.stock_items).toEqual([items[5], later[0]]);

    const all = [...first.stock_items, ...second.stock_items, ...third.stock_items];
    expect(new Set(all).size).toBe(all.length);

    const sold = await env.DB.prepare("SELECT content, order_id FROM stock_items WHERE product_id = ? AND status = 'sold' ORDER BY id")
      .bind(product.id)
      .all<{ content: string; order_id: number }>();
    expect(sold.results.map((r) => r.content)).toEqual(all);
    expect(sold.results.map((r) => r.order_id)).toEqual([first.id, first.id, second.id, second.id, second.id, third.id, third.id]);
    expect(await stockCount(product.id)).toBe(1);
  });

  it('computes money in exact cents (0.07 x 3 = 0.21; 1.00 - 0.21 = 0.79)', async () => {
    const user = await newUser({ balance: 1 });
    const product = await newProduct({ price: 0.07, stock: 3 });
    const res = await buy(user, product.id, 3);
    expect(res.status, res.text).toBe(201);
    expect(res.json.data.unit_price).toBe(0.07);
    expect(res.json.data.total_amount).toBe(0.21);
    expect(await balanceOf(user)).toBe(0.79);
    const row = await env.DB.prepare('SELECT balance_cents FROM users WHERE id = ?').bind(user.id).first<{ balance_cents: number }>();
    expect(row!.balance_cents).toBe(79);
    const order = await env.DB.prepare('SELECT unit_price_cents, total_amount_cents FROM orders WHERE id = ?')
      .bind(res.json.data.id)
      .first();
    expect(order).toEqual({ unit_price_cents: 7, total_amount_cents: 21 });
  });

  it('rejects insufficient balance with INSUFFICIENT_BALANCE {code, required, balance} and changes nothing', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 2, stock: 5 });
    const res = await expectNothingChanged(user, product.id, () => buy(user, product.id, 3));
    expectError(res, 400, 'INSUFFICIENT_BALANCE');
    expect(res.json.errors).toEqual({ code: 'INSUFFICIENT_BALANCE', required: 6, balance: 5 });
  });

  it('rejects insufficient stock with INSUFFICIENT_STOCK {code, requested, available} and changes nothing', async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 1, stock: 2 });
    const res = await expectNothingChanged(user, product.id, () => buy(user, product.id, 3));
    expectError(res, 400, 'INSUFFICIENT_STOCK');
    expect(res.json.errors).toEqual({ code: 'INSUFFICIENT_STOCK', requested: 3, available: 2 });
  });

  it('rejects a quantity outside the pack sizes with INVALID_PACK_SIZE {code, allowed_quantities} and changes nothing', async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 1, stock: 20, allowedQuantities: [5, 10] });
    const res = await expectNothingChanged(user, product.id, () => buy(user, product.id, 3));
    expectError(res, 400, 'INVALID_PACK_SIZE');
    expect(res.json.errors).toEqual({ code: 'INVALID_PACK_SIZE', allowed_quantities: [5, 10] });

    // an allowed pack size goes through
    const okRes = await buy(user, product.id, 5);
    expect(okRes.status, okRes.text).toBe(201);
    expect(okRes.json.data.stock_items).toHaveLength(5);
  });

  it('rejects an inactive product with PRODUCT_UNAVAILABLE and changes nothing', async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 1, stock: 3 });
    const patch = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { active: false } });
    expect(patch.status, patch.text).toBe(200);

    // the inactive product is not on the public stock route, so the snapshot is taken from D1 here
    const state = async () => ({
      balance: await balanceOf(user),
      orders: await dbCount('SELECT count(*) AS n FROM orders WHERE user_id = ?', user.id),
      ledger: await dbCount('SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ?', user.id),
      stock: await env.DB.prepare('SELECT stock_count FROM products WHERE id = ?').bind(product.id).first('stock_count'),
      available: await dbCount("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'", product.id),
    });
    const before = await state();
    const res = await buy(user, product.id, 1);
    expectError(res, 400, 'PRODUCT_UNAVAILABLE');
    expect(await state()).toEqual(before);
    expect(before.stock).toBe(3);
  });

  it('answers 404 NOT_FOUND for an unknown product and changes nothing', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 }); // only to anchor the snapshot
    const res = await expectNothingChanged(user, product.id, () => buy(user, 999_999_999, 1));
    expectError(res, 404, 'NOT_FOUND');
  });

  describe('validation (422 VALIDATION_FAILED with errors.<field>), nothing changed', () => {
    const cases: Array<{ name: string; body: unknown; headers?: Record<string, string>; field: string }> = [
      { name: 'quantity as a numeric string', body: { quantity: '3' }, field: 'quantity' },
      { name: 'fractional quantity', body: { quantity: 1.5 }, field: 'quantity' },
      { name: 'quantity 0', body: { quantity: 0 }, field: 'quantity' },
      { name: 'quantity 1001', body: { quantity: 1001 }, field: 'quantity' },
      { name: 'missing product_id', body: { product_id: undefined, quantity: 1 }, field: 'product_id' },
      { name: 'product_id as a string', body: { product_id: 'PRODUCT', quantity: 1 }, field: 'product_id' },
      { name: 'malformed JSON', body: '{"product_id": 1, "quantity": ', field: 'body' },
      { name: 'non-JSON content type', body: 'product_id=1&quantity=1', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, field: 'body' },
    ];

    for (const tc of cases) {
      it(tc.name, async () => {
        const user = await newUser({ balance: 100 });
        const product = await newProduct({ price: 1, stock: 5 });
        const body =
          typeof tc.body === 'string' ? tc.body : { product_id: product.id, quantity: 1, ...(tc.body as object) };
        const res = await expectNothingChanged(user, product.id, () =>
          call('/orders', { method: 'POST', key: user.key, body, headers: tc.headers }),
        );
        expectError(res, 422, 'VALIDATION_FAILED');
        expect(res.json.errors, res.text).toHaveProperty(tc.field);
        expect(Array.isArray(res.json.errors[tc.field])).toBe(true);
        expect(res.json.errors[tc.field].length).toBeGreaterThan(0);
        expect(typeof res.json.errors[tc.field][0]).toBe('string');
      });
    }
  });

  it('answers 401 UNAUTHORIZED without an API key (and with an invalid one) and changes nothing', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 2 });
    await expectNothingChanged(user, product.id, async () => {
      const anonymous = await call('/orders', { body: { product_id: product.id, quantity: 1 } });
      expectError(anonymous, 401, 'UNAUTHORIZED');
      const wrong = await call('/orders', { key: 'sk_live_' + 'x'.repeat(40), body: { product_id: product.id, quantity: 1 } });
      expectError(wrong, 401, 'UNAUTHORIZED');
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// GET /orders
// ---------------------------------------------------------------------------------------------------------------

describe('GET /orders', () => {
  it('paginates newest first with meta {current_page, per_page, total, total_pages}', async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 1, stock: 5 });
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await placeOrder(user, product.id, 1)).id);
    const newestFirst = [...ids].reverse();

    const page1 = await call('/orders?page=1&per_page=2', { key: user.key });
    expect(page1.status, page1.text).toBe(200);
    expect(page1.json.success).toBe(true);
    expect(page1.json.meta).toEqual({ current_page: 1, per_page: 2, total: 5, total_pages: 3 });
    expect(page1.json.data.map((o: any) => o.id)).toEqual(newestFirst.slice(0, 2));
    expect(page1.json.data[0]).toMatchObject({ product_id: product.id, product_name: product.name, quantity: 1, unit_price: 1, total_amount: 1, status: 'pending' });

    const page2 = await call('/orders?page=2&per_page=2', { key: user.key });
    expect(page2.json.meta).toEqual({ current_page: 2, per_page: 2, total: 5, total_pages: 3 });
    expect(page2.json.data.map((o: any) => o.id)).toEqual(newestFirst.slice(2, 4));

    const page3 = await call('/orders?page=3&per_page=2', { key: user.key });
    expect(page3.json.data.map((o: any) => o.id)).toEqual(newestFirst.slice(4));

    const past = await call('/orders?page=4&per_page=2', { key: user.key });
    expect(past.status, past.text).toBe(200);
    expect(past.json.data).toEqual([]);
    expect(past.json.meta).toEqual({ current_page: 4, per_page: 2, total: 5, total_pages: 3 });

    const defaults = await call('/orders', { key: user.key });
    expect(defaults.json.meta).toEqual({ current_page: 1, per_page: 20, total: 5, total_pages: 1 });
    expect(defaults.json.data.map((o: any) => o.id)).toEqual(newestFirst);

    // created_at is non-increasing down the list
    const stamps = defaults.json.data.map((o: any) => o.created_at);
    expect([...stamps].sort().reverse()).toEqual(stamps);
  });

  it('rejects per_page 101, per_page 0, page 0 and non-numeric page with 422', async () => {
    const user = await newUser();
    for (const [query, field] of [
      ['per_page=101', 'per_page'],
      ['per_page=0', 'per_page'],
      ['page=0', 'page'],
      ['page=abc', 'page'],
    ] as const) {
      const res = await call(`/orders?${query}`, { key: user.key });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors, query).toHaveProperty(field);
    }
    const max = await call('/orders?per_page=100', { key: user.key });
    expect(max.status, max.text).toBe(200);
  });

  it("never lists another user's orders", async () => {
    const alice = await newUser({ balance: 10 });
    const bob = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 4 });
    const aliceOrder = await placeOrder(alice, product.id, 1);
    const bobOrders = [await placeOrder(bob, product.id, 1), await placeOrder(bob, product.id, 2)];

    const a = await call('/orders', { key: alice.key });
    expect(a.json.data.map((o: any) => o.id)).toEqual([aliceOrder.id]);
    expect(a.json.meta.total).toBe(1);
    const b = await call('/orders?per_page=100', { key: bob.key });
    expect(b.json.data.map((o: any) => o.id)).toEqual([bobOrders[1].id, bobOrders[0].id]);
    expect(b.json.meta.total).toBe(2);

    const fresh = await newUser();
    const none = await call('/orders', { key: fresh.key });
    expect(none.json.data).toEqual([]);
    expect(none.json.meta).toEqual({ current_page: 1, per_page: 20, total: 0, total_pages: 0 });
  });

  it('answers 401 without an API key', async () => {
    expectError(await call('/orders'), 401, 'UNAUTHORIZED');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// GET /orders/{id}
// ---------------------------------------------------------------------------------------------------------------

describe('GET /orders/{id}', () => {
  it('returns the order with its stock_items', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1.25, stock: 3 });
    const placed = await placeOrder(user, product.id, 2);

    const res = await call(`/orders/${placed.id}`, { key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toEqual({ ...placed, status: 'pending', claims: [] });
    expect(res.json.data.stock_items).toEqual(placed.stock_items);
    expect(res.json.data.stock_items).toHaveLength(2);
  });

  it("answers 404 for another user's order and for an unknown order, 422 for a non-integer id", async () => {
    const owner = await newUser({ balance: 10 });
    const other = await newUser();
    const product = await newProduct({ price: 1, stock: 1 });
    const placed = await placeOrder(owner, product.id, 1);

    const foreign = await call(`/orders/${placed.id}`, { key: other.key });
    expectError(foreign, 404, 'NOT_FOUND');
    expect(foreign.text).not.toContain(placed.stock_items[0]);

    expectError(await call('/orders/999999999', { key: owner.key }), 404, 'NOT_FOUND');

    const bad = await call('/orders/abc', { key: owner.key });
    expectError(bad, 422, 'VALIDATION_FAILED');
    expect(bad.json.errors).toHaveProperty('id');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// POST /orders/{id}/cancel
// ---------------------------------------------------------------------------------------------------------------

describe('POST /orders/{id}/cancel', () => {
  it('refunds the full amount, cancels the order and revokes (does not restock) the items', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1.75, stock: 5 });
    const placed = await placeOrder(user, product.id, 2);
    expect(await balanceOf(user)).toBe(6.5);
    const stockAfterPurchase = await stockCount(product.id);
    expect(stockAfterPurchase).toBe(3);

    const res = await call(`/orders/${placed.id}/cancel`, { method: 'POST', key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    expect(typeof res.json.message).toBe('string');
    expect(res.json.data.refunded_amount).toBe(3.5);
    expect(res.json.data.refunded_amount).toBe(placed.total_amount);

    expect(await balanceOf(user)).toBe(10);

    const detail = await call(`/orders/${placed.id}`, { key: user.key });
    expect(detail.json.data.status).toBe('cancelled');

    // disclosed items are never returned to sale
    expect(await stockCount(product.id)).toBe(stockAfterPurchase);
    const items = await env.DB.prepare('SELECT content, status, order_id FROM stock_items WHERE order_id = ? ORDER BY id')
      .bind(placed.id)
      .all<{ content: string; status: string; order_id: number }>();
    expect(items.results.map((i) => i.content)).toEqual(placed.stock_items);
    expect(items.results.every((i) => i.status === 'revoked')).toBe(true);
    expect(await dbCount("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'", product.id)).toBe(3);

    const refunds = await env.DB.prepare("SELECT amount_cents, balance_after_cents FROM wallet_transactions WHERE order_id = ? AND type = 'refund'")
      .bind(placed.id)
      .all();
    expect(refunds.results).toEqual([{ amount_cents: 350, balance_after_cents: 1000 }]);

    const tx = await call('/wallet/transactions', { key: user.key });
    expect(tx.json.data[0]).toMatchObject({ type: 'refund', amount: 3.5, balance_after: 10 });
  });

  it('rejects a second cancel with ORDER_NOT_CANCELLABLE and refunds only once', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 2, stock: 2 });
    const placed = await placeOrder(user, product.id, 1);
    const first = await call(`/orders/${placed.id}/cancel`, { method: 'POST', key: user.key });
    expect(first.status, first.text).toBe(200);

    const second = await expectNothingChanged(user, product.id, () => call(`/orders/${placed.id}/cancel`, { method: 'POST', key: user.key }));
    expectError(second, 400, 'ORDER_NOT_CANCELLABLE');
    expect(await balanceOf(user)).toBe(5);
    expect(await dbCount("SELECT count(*) AS n FROM wallet_transactions WHERE order_id = ? AND type = 'refund'", placed.id)).toBe(1);
  });

  it("answers 404 for another user's order and changes nothing for either user", async () => {
    const owner = await newUser({ balance: 5 });
    const other = await newUser({ balance: 5 });
    const product = await newProduct({ price: 2, stock: 2 });
    const placed = await placeOrder(owner, product.id, 1);

    const ownerBefore = await snapshot(owner, product.id);
    const res = await expectNothingChanged(other, product.id, () => call(`/orders/${placed.id}/cancel`, { method: 'POST', key: other.key }));
    expectError(res, 404, 'NOT_FOUND');
    expect(await snapshot(owner, product.id)).toEqual(ownerBefore);
    const row = await env.DB.prepare('SELECT status FROM orders WHERE id = ?').bind(placed.id).first('status');
    expect(row).toBe('pending');
    expect(await dbCount("SELECT count(*) AS n FROM stock_items WHERE order_id = ? AND status = 'sold'", placed.id)).toBe(1);

    expectError(await call('/orders/999999999/cancel', { method: 'POST', key: owner.key }), 404, 'NOT_FOUND');
    expectError(await call('/orders/abc/cancel', { method: 'POST', key: owner.key }), 422, 'VALIDATION_FAILED');
  });

  it('rejects cancelling a completed order with ORDER_NOT_CANCELLABLE and changes nothing', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 2, stock: 2 });
    const placed = await placeOrder(user, product.id, 1);
    await env.DB.prepare("UPDATE orders SET status = 'completed' WHERE id = ?").bind(placed.id).run();

    const res = await expectNothingChanged(user, product.id, () => call(`/orders/${placed.id}/cancel`, { method: 'POST', key: user.key }));
    expectError(res, 400, 'ORDER_NOT_CANCELLABLE');
    expect(await env.DB.prepare('SELECT status FROM orders WHERE id = ?').bind(placed.id).first('status')).toBe('completed');
    expect(await dbCount("SELECT count(*) AS n FROM stock_items WHERE order_id = ? AND status = 'sold'", placed.id)).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// GET /orders/{id}/export
// ---------------------------------------------------------------------------------------------------------------

describe('GET /orders/{id}/export', () => {
  it('exports the items as a text attachment, one per line (default format and format=txt)', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1 });
    const prefix = unique('EXPORT');
    await restock(product.id, 3, prefix);
    const placed = await placeOrder(user, product.id, 3);

    for (const query of ['', '?format=txt']) {
      const res = await call(`/orders/${placed.id}/export${query}`, { key: user.key });
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('Content-Type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('Content-Disposition')).toBe(`attachment; filename="${placed.order_number}.txt"`);
      const lines = res.text.split('\n').filter((l) => l.length > 0);
      expect(lines).toEqual(placed.stock_items);
      expect(lines).toEqual([`${prefix}-0`, `${prefix}-1`, `${prefix}-2`]);
    }
  });

  it('also works through the api_key query parameter', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 });
    const placed = await placeOrder(user, product.id, 1);
    const res = await SELF.fetch(`${BASE}/orders/${placed.id}/export?format=txt&api_key=${user.key}`);
    expect(res.status).toBe(200);
    expect((await res.text()).trim()).toBe(placed.stock_items[0]);
  });

  it("rejects format=csv with 422 and answers 404 for another user's or an unknown order", async () => {
    const owner = await newUser({ balance: 10 });
    const other = await newUser();
    const product = await newProduct({ price: 1, stock: 1 });
    const placed = await placeOrder(owner, product.id, 1);

    const csv = await call(`/orders/${placed.id}/export?format=csv`, { key: owner.key });
    expectError(csv, 422, 'VALIDATION_FAILED');
    expect(csv.json.errors).toHaveProperty('format');

    const foreign = await call(`/orders/${placed.id}/export`, { key: other.key });
    expectError(foreign, 404, 'NOT_FOUND');
    expect(foreign.text).not.toContain(placed.stock_items[0]);

    expectError(await call('/orders/999999999/export', { key: owner.key }), 404, 'NOT_FOUND');
    expectError(await call(`/orders/${placed.id}/export`), 401, 'UNAUTHORIZED');
  });
});
