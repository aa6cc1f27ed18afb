import { env } from 'cloudflare:test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { balanceOf, buy, call, expectError, fund, newProduct, newUser, restock, unique, type TestUser, setStockCount } from '../helpers';
import { referencePrice, type ReferenceCoupon, type Tier } from '../prices-reference';
import { seedFor } from '../seed';
import { auditLedger } from '../../src/services/operator/ledger-audit';

// Volume prices, a reseller's discount, coupons and the price lock, through the worker against the local D1. The
// arithmetic is checked against test/prices-reference.ts: what the quote says, what the order records, what the ledger
// debits and what a cancellation refunds are all the reference's total.

const SEED = seedFor('prices.test.ts', 20_261_125);
const MANY_CANCELS = { MAX_CANCELS_PER_DAY: '100000' };

interface CouponFields {
  code?: string;
  percent_off?: number | null;
  amount_off_cents?: number | null;
  min_total_cents?: number | null;
  starts_at?: string | null;
  expires_at?: string | null;
  max_redemptions?: number | null;
  max_per_user?: number | null;
  product_ids?: number[] | null;
  active?: number;
}

/** A coupon written straight into D1 (the admin API's own tests are in test/orders/coupons.test.ts). */
async function insertCoupon(fields: CouponFields): Promise<string> {
  const code = fields.code ?? unique('C').toUpperCase().replace(/[^A-Z0-9-]/g, '').slice(-30);
  const now = new Date().toISOString();
  await env.DB.prepare(
    `INSERT INTO coupons (code, percent_off, amount_off_cents, min_total_cents, starts_at, expires_at, max_redemptions, max_per_user, product_ids, active, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      code,
      fields.percent_off === undefined && fields.amount_off_cents === undefined ? 10 : (fields.percent_off ?? null),
      fields.amount_off_cents ?? null,
      fields.min_total_cents ?? null,
      fields.starts_at ?? null,
      fields.expires_at ?? null,
      fields.max_redemptions ?? null,
      fields.max_per_user === undefined ? 1 : fields.max_per_user,
      fields.product_ids ? JSON.stringify(fields.product_ids) : null,
      fields.active ?? 1,
      now,
      now,
    )
    .run();
  return code;
}

// The product's prices are its one variant's: both rows are set.
const setPrices = (productId: number, priceCents: number, tiers: Tier[] | null) => {
  const text = tiers ? JSON.stringify(tiers.map((t) => ({ min_quantity: t.minQuantity, price_cents: t.priceCents }))) : null;
  return env.DB.batch([
    env.DB.prepare('UPDATE products SET price_cents = ?, volume_prices = ? WHERE id = ?').bind(priceCents, text, productId),
    env.DB.prepare('UPDATE product_variants SET price_cents = ?, volume_prices = ? WHERE product_id = ?').bind(priceCents, text, productId),
  ]);
};

const setDiscount = (userId: number, percent: number) => env.DB.prepare('UPDATE users SET discount_percent = ? WHERE id = ?').bind(percent, userId).run();

const purchase = (user: TestUser, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call('/orders', { key: user.key, body, headers });

const quote = (user: TestUser, query: string) => call(`/orders/quote?${query}`, { key: user.key });

/** What a refused purchase must leave: no order, the same balance, the same stock. */
async function expectNothingCharged(user: TestUser, productId: number, balance: number, stock: number, orderCount = 0) {
  expect(await balanceOf(user)).toBe(balance);
  const orders = await env.DB.prepare('SELECT count(*) AS n FROM orders WHERE user_id = ?').bind(user.id).first<{ n: number }>();
  expect(orders!.n).toBe(orderCount);
  const product = await env.DB.prepare('SELECT stock_count FROM products WHERE id = ?').bind(productId).first<{ stock_count: number }>();
  expect(product!.stock_count).toBe(stock);
}

describe('a priced purchase', () => {
  it('applies the volume tier, then the discount, then the coupon; the ledger debits and a cancel refunds the total', async () => {
    const product = await newProduct({ price: 10, stock: 20 });
    await setPrices(product.id, 1000, [
      { minQuantity: 5, priceCents: 900 },
      { minQuantity: 10, priceCents: 850 },
    ]);
    const user = await newUser({ balance: 500 });
    await setDiscount(user.id, 15);
    const code = await insertCoupon({ percent_off: 10 });

    // 10 units: tier 8.50, less 15 % = 7.225 -> 7.23 (half up), subtotal 72.30, coupon 7.23, total 65.07.
    const q = await quote(user, `product_id=${product.id}&quantity=10&coupon=${code.toLowerCase()}`);
    expect(q.status, q.text).toBe(200);
    expect(q.json.data).toEqual({
      product_id: product.id,
      quantity: 10,
      list_unit_price: 10,
      unit_price: 7.23,
      discount_amount: 34.93,
      coupon: code,
      total_amount: 65.07,
    });

    const res = await purchase(user, { product_id: product.id, quantity: 10, coupon: code.toLowerCase(), expected_total: 65.07 });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data).toMatchObject({ list_unit_price: 10, unit_price: 7.23, discount_amount: 34.93, coupon: code, total_amount: 65.07 });
    expect(await balanceOf(user)).toBe(434.93);
    const debit = await env.DB.prepare("SELECT amount_cents FROM wallet_transactions WHERE order_id = ? AND type = 'purchase'")
      .bind(res.json.data.id)
      .first<{ amount_cents: number }>();
    expect(debit!.amount_cents).toBe(-6507);
    const redemption = await env.DB.prepare('SELECT count(*) AS n FROM coupon_redemptions WHERE order_id = ?').bind(res.json.data.id).first<{ n: number }>();
    expect(redemption!.n).toBe(1);

    const detail = await call(`/orders/${res.json.data.id}`, { key: user.key });
    expect(detail.json.data).toMatchObject({ list_unit_price: 10, unit_price: 7.23, discount_amount: 34.93, coupon: code, total_amount: 65.07 });

    const cancel = await call(`/orders/${res.json.data.id}/cancel`, { key: user.key, method: 'POST' });
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.json.data.refunded_amount).toBe(65.07);
    expect(await balanceOf(user)).toBe(500);
    // A cancellation does not give the redemption back.
    const after = await env.DB.prepare('SELECT count(*) AS n FROM coupon_redemptions WHERE order_id = ?').bind(res.json.data.id).first<{ n: number }>();
    expect(after!.n).toBe(1);
  });

  it('an amount coupon at or above the subtotal makes the order free; below every tier the list price applies', async () => {
    const product = await newProduct({ price: 3, stock: 5 });
    await setPrices(product.id, 300, [{ minQuantity: 3, priceCents: 250 }]);
    const user = await newUser({ balance: 10 });
    const code = await insertCoupon({ amount_off_cents: 10_000 });
    const res = await purchase(user, { product_id: product.id, quantity: 2, coupon: code });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data).toMatchObject({ unit_price: 3, total_amount: 0, discount_amount: 6, coupon: code });
    expect(res.json.data.stock_items).toHaveLength(2);
    expect(await balanceOf(user)).toBe(10);
  });

  it('a free order (a 100 % coupon) needs no money, is recorded by a 0.00 purchase row, and a cancel refunds 0.00 and revokes its items', async () => {
    const product = await newProduct({ price: 7.5, stock: 3 });
    const user = await newUser();
    const code = await insertCoupon({ percent_off: 100 });
    const q = await quote(user, `product_id=${product.id}&quantity=2&coupon=${code}`);
    expect(q.json.data).toEqual({ product_id: product.id, quantity: 2, list_unit_price: 7.5, unit_price: 7.5, discount_amount: 15, coupon: code, total_amount: 0 });

    const res = await purchase(user, { product_id: product.id, quantity: 2, coupon: code, expected_total: 0 });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data).toMatchObject({ total_amount: 0, discount_amount: 15, coupon: code, status: 'pending' });
    expect(res.json.data.stock_items).toHaveLength(2);
    const ledger = await call('/wallet/transactions', { key: user.key });
    expect(ledger.json.data).toEqual([expect.objectContaining({ type: 'purchase', amount: 0, balance_after: 0, description: expect.stringContaining(res.json.data.order_number) })]);

    const cancel = await call(`/orders/${res.json.data.id}/cancel`, { key: user.key, method: 'POST' });
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.json.data).toMatchObject({ refunded_amount: 0, order: { status: 'cancelled', total_amount: 0 } });
    expect(await balanceOf(user)).toBe(0);
    const items = await env.DB.prepare('SELECT status FROM stock_items WHERE order_id = ?').bind(res.json.data.id).all<{ status: string }>();
    expect(items.results.map((i) => i.status)).toEqual(['revoked', 'revoked']);
    // A second cancel finds it cancelled: the 0.00 refund row is what marks it refunded.
    expectError(await call(`/orders/${res.json.data.id}/cancel`, { key: user.key, method: 'POST' }), 400, 'ORDER_NOT_CANCELLABLE');
    const refunds = await env.DB.prepare("SELECT amount_cents FROM wallet_transactions WHERE order_id = ? AND type = 'refund'").bind(res.json.data.id).all();
    expect(refunds.results).toEqual([{ amount_cents: 0 }]);
    expect(await auditLedger(env.DB)).toEqual([]);
  });

  it('a free order that comes up short of items rolls back whole: the discount identity is the backstop at total 0', async () => {
    const product = await newProduct({ price: 1, stock: 1 });
    const user = await newUser();
    const code = await insertCoupon({ percent_off: 100 });
    // stock_count says 2 while one item exists: the claim of 2 comes up short. With unit price and total both 0,
    // only discount_amount = list price x quantity - total notices the quantity that changed.
    await setStockCount(product.id, 2);
    const res = await purchase(user, { product_id: product.id, quantity: 2, coupon: code });
    expect(res.status).toBeGreaterThanOrEqual(400);
    const orders = await env.DB.prepare('SELECT count(*) AS n FROM orders WHERE user_id = ?').bind(user.id).first<{ n: number }>();
    expect(orders!.n).toBe(0);
    const items = await env.DB.prepare("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'").bind(product.id).first<{ n: number }>();
    expect(items!.n).toBe(1);
    const redemptions = await env.DB.prepare('SELECT count(*) AS n FROM coupon_redemptions WHERE user_id = ?').bind(user.id).first<{ n: number }>();
    expect(redemptions!.n).toBe(0);
  });

  it('a free order counts against the cancel cap like any other', async () => {
    const product = await newProduct({ price: 1, stock: 3 });
    const user = await newUser();
    const code = await insertCoupon({ percent_off: 100, max_per_user: null });
    const vars = { MAX_CANCELS_PER_DAY: '1' };
    const first = await purchase(user, { product_id: product.id, quantity: 1, coupon: code });
    const second = await purchase(user, { product_id: product.id, quantity: 1, coupon: code });
    expect((await call(`/orders/${first.json.data.id}/cancel`, { key: user.key, method: 'POST', vars })).status).toBe(200);
    expectError(await call(`/orders/${second.json.data.id}/cancel`, { key: user.key, method: 'POST', vars }), 400, 'CANCEL_LIMIT_REACHED');
  });

  it('a 90 % discount rounds a unit price under 5 cents to 0 (half up: 0.04 x 10 % = 0.004 -> 0.00, 0.05 -> 0.01)', async () => {
    const cheap = await newProduct({ price: 0.04, stock: 2 });
    const five = await newProduct({ price: 0.05, stock: 2 });
    const user = await newUser();
    await setDiscount(user.id, 90);
    const free = await purchase(user, { product_id: cheap.id, quantity: 2 });
    expect(free.status, free.text).toBe(201);
    expect(free.json.data).toMatchObject({ list_unit_price: 0.04, unit_price: 0, discount_amount: 0.08, total_amount: 0 });
    const q = await quote(user, `product_id=${five.id}&quantity=2`);
    expect(q.json.data).toMatchObject({ unit_price: 0.01, total_amount: 0.02 });
  });

  it('for any price, tiers, discount, coupon and quantity: quote = order total = ledger debit = refund = the reference', async () => {
    const product = await newProduct({ price: 1, stock: 0 });
    const user = await newUser();
    await fund(user, 1_000_000);
    const tiersArb = fc
      .uniqueArray(fc.integer({ min: 2, max: 40 }), { maxLength: 4 })
      .chain((quantities) =>
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: quantities.length, maxLength: quantities.length }).map((steps) => ({
          quantities: [...quantities].sort((a, b) => a - b),
          steps,
        })),
      );
    const couponArb: fc.Arbitrary<ReferenceCoupon> = fc.oneof(
      fc.constant(null),
      fc.integer({ min: 1, max: 100 }).map((percentOff) => ({ percentOff })),
      fc.constant({ percentOff: 100 }),
      fc.integer({ min: 1, max: 2_000_000 }).map((amountOffCents) => ({ amountOffCents })),
      fc.integer({ min: 1, max: 200 }).map((amountOffCents) => ({ amountOffCents })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 20 })),
        tiersArb,
        fc.oneof(fc.integer({ min: 0, max: 90 }), fc.constant(90)),
        couponArb,
        fc.integer({ min: 1, max: 40 }),
        async (priceCents, { quantities, steps }, discountPercent, coupon, quantity) => {
          // Each tier's price is below the one before it (and below the list price); tiers that would reach 0 are dropped.
          const tiers: Tier[] = [];
          let previous = priceCents;
          quantities.forEach((minQuantity, i) => {
            const price = previous - steps[i];
            if (price >= 1) tiers.push({ minQuantity, priceCents: (previous = price) });
          });
          await setPrices(product.id, priceCents, tiers.length ? tiers : null);
          await setDiscount(user.id, discountPercent);
          const code = coupon
            ? await insertCoupon('percentOff' in coupon ? { percent_off: coupon.percentOff, max_per_user: null } : { amount_off_cents: coupon.amountOffCents, max_per_user: null })
            : undefined;
          await restock(product.id, quantity);
          const expected = referencePrice({ priceCents, tiers, discountPercent, coupon, quantity });
          const cents = (amount: number) => Math.round(amount * 100);

          const q = await quote(user, `product_id=${product.id}&quantity=${quantity}${code ? `&coupon=${code}` : ''}`);
          expect(q.status, q.text).toBe(200);
          expect(cents(q.json.data.total_amount)).toBe(expected.total);
          expect(cents(q.json.data.unit_price)).toBe(expected.unitPrice);
          expect(cents(q.json.data.discount_amount)).toBe(expected.discountAmount);

          const before = cents(await balanceOf(user));
          const res = await purchase(user, { product_id: product.id, quantity, ...(code ? { coupon: code } : {}), expected_total: expected.total / 100 });
          expect(res.status, res.text).toBe(201);
          const order = res.json.data;
          expect(cents(order.total_amount)).toBe(expected.total);
          expect(cents(order.unit_price)).toBe(expected.unitPrice);
          expect(cents(order.list_unit_price)).toBe(priceCents);
          expect(cents(order.discount_amount)).toBe(expected.discountAmount);
          expect(expected.total).toBeGreaterThanOrEqual(0);
          const debit = await env.DB.prepare("SELECT amount_cents FROM wallet_transactions WHERE order_id = ? AND type = 'purchase'")
            .bind(order.id)
            .first<{ amount_cents: number }>();
          // 0 - total, not -total: a free order's row is 0, and -0 is not 0 to toBe.
          expect(debit!.amount_cents).toBe(0 - expected.total);
          expect(cents(await balanceOf(user))).toBe(before - expected.total);

          const cancel = await call(`/orders/${order.id}/cancel`, { key: user.key, method: 'POST', vars: MANY_CANCELS });
          expect(cancel.status, cancel.text).toBe(200);
          expect(cents(cancel.json.data.refunded_amount)).toBe(expected.total);
          expect(cents(await balanceOf(user))).toBe(before);
        },
      ),
      { seed: SEED, numRuns: 40 },
    );
  }, 120_000);
});

describe('coupons that cannot be used: 400 COUPON_INVALID with the reason, nothing charged', () => {
  const past = new Date(Date.now() - 86_400_000).toISOString();
  const future = new Date(Date.now() + 86_400_000).toISOString();
  const cases: { reason: string; coupon: (productId: number, otherProductId: number) => Promise<string>; message: RegExp; before?: (user: TestUser, productId: number, code: string) => Promise<void> }[] = [
    { reason: 'unknown', coupon: async () => 'NO-SUCH-COUPON', message: /does not exist/ },
    { reason: 'inactive', coupon: () => insertCoupon({ active: 0 }), message: /not active/ },
    { reason: 'not started', coupon: () => insertCoupon({ starts_at: future }), message: /cannot be used yet/ },
    { reason: 'expired', coupon: () => insertCoupon({ expires_at: past }), message: /expired/ },
    {
      reason: 'used up',
      coupon: () => insertCoupon({ max_redemptions: 1, max_per_user: null }),
      message: /used up/,
      before: async (_user, productId, code) => {
        const other = await newUser({ balance: 10 });
        expect((await purchase(other, { product_id: productId, quantity: 1, coupon: code })).status).toBe(201);
      },
    },
    {
      reason: 'used up by this user',
      coupon: () => insertCoupon({ max_per_user: 1 }),
      message: /already used this coupon/,
      before: async (user, productId, code) => {
        expect((await purchase(user, { product_id: productId, quantity: 1, coupon: code })).status).toBe(201);
      },
    },
    { reason: 'for other products', coupon: (_p, other) => insertCoupon({ product_ids: [other] }), message: /does not apply to this product/ },
    { reason: 'min_total above the subtotal', coupon: () => insertCoupon({ min_total_cents: 501 }), message: /at least \$5\.01/ },
  ];
  for (const { reason, coupon, message, before } of cases) {
    it(reason, async () => {
      const product = await newProduct({ price: 5, stock: 5 });
      const other = await newProduct({ price: 5 });
      const user = await newUser({ balance: 20 });
      const code = await coupon(product.id, other.id);
      if (before) await before(user, product.id, code);
      const balance = await balanceOf(user);
      const orderCount = (await env.DB.prepare('SELECT count(*) AS n FROM orders WHERE user_id = ?').bind(user.id).first<{ n: number }>())!.n;
      const stock = (await env.DB.prepare('SELECT stock_count FROM products WHERE id = ?').bind(product.id).first<{ stock_count: number }>())!.stock_count;
      const res = await purchase(user, { product_id: product.id, quantity: 1, coupon: code });
      expectError(res, 400, 'COUPON_INVALID');
      expect(res.json.errors.coupon).toHaveLength(1);
      expect(res.json.errors.coupon[0]).toMatch(message);
      expect(res.json.error).toBe(res.json.errors.coupon[0]);
      const q = await quote(user, `product_id=${product.id}&quantity=1&coupon=${code}`);
      expectError(q, 400, 'COUPON_INVALID');
      expect(q.json.errors.coupon[0]).toMatch(message);
      await expectNothingCharged(user, product.id, balance, stock, orderCount);
    });
  }

  it('min_total is compared with the subtotal after volume and discount; equal is enough', async () => {
    const product = await newProduct({ price: 5, stock: 5 });
    const user = await newUser({ balance: 20 });
    const code = await insertCoupon({ min_total_cents: 500, percent_off: 50 });
    const res = await purchase(user, { product_id: product.id, quantity: 1, coupon: code });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data.total_amount).toBe(2.5);
  });
});

describe('redemptions are counted in the purchase batch', () => {
  it('20 simultaneous purchases with a 5-use coupon make exactly 5 orders with it', async () => {
    const product = await newProduct({ price: 1, stock: 40 });
    const user = await newUser({ balance: 100 });
    const code = await insertCoupon({ max_redemptions: 5, max_per_user: null, percent_off: 50 });
    const results = await Promise.all(Array.from({ length: 20 }, () => purchase(user, { product_id: product.id, quantity: 1, coupon: code })));
    const placed = results.filter((r) => r.status === 201);
    expect(placed).toHaveLength(5);
    for (const r of results.filter((r) => r.status !== 201)) {
      expectError(r, 400, 'COUPON_INVALID');
      expect(r.json.errors.coupon[0]).toMatch(/used up/);
    }
    const redemptions = await env.DB.prepare('SELECT count(*) AS n FROM coupon_redemptions WHERE coupon_id = (SELECT id FROM coupons WHERE code = ?)')
      .bind(code)
      .first<{ n: number }>();
    expect(redemptions!.n).toBe(5);
    expect(await balanceOf(user)).toBe(97.5);
  });

  it('5 simultaneous purchases of one buyer with a once-per-buyer coupon make exactly 1', async () => {
    const product = await newProduct({ price: 1, stock: 10 });
    const user = await newUser({ balance: 100 });
    const code = await insertCoupon({ max_per_user: 1 });
    const results = await Promise.all(Array.from({ length: 5 }, () => purchase(user, { product_id: product.id, quantity: 1, coupon: code })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
  });
});

describe('the price lock: expected_total', () => {
  it('a total other than expected answers 409 PRICE_CHANGED with both totals, nothing charged; the right one buys', async () => {
    const product = await newProduct({ price: 4, stock: 5 });
    const user = await newUser({ balance: 50 });
    const q = await quote(user, `product_id=${product.id}&quantity=2`);
    expect(q.json.data.total_amount).toBe(8);
    await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { price: 4.5 } });
    const res = await purchase(user, { product_id: product.id, quantity: 2, expected_total: q.json.data.total_amount });
    expectError(res, 409, 'PRICE_CHANGED');
    expect(res.json.errors).toEqual({ expected_total: 8, total: 9 });
    await expectNothingCharged(user, product.id, 50, 5);
    const again = await purchase(user, { product_id: product.id, quantity: 2, expected_total: 9 });
    expect(again.status, again.text).toBe(201);
    expect(again.json.data.total_amount).toBe(9);
  });

  it('the coupon is judged before the price lock, the price lock before the balance', async () => {
    const product = await newProduct({ price: 4, stock: 5 });
    const user = await newUser({ balance: 1 });
    expectError(await purchase(user, { product_id: product.id, quantity: 1, coupon: 'NOPE', expected_total: 3 }), 400, 'COUPON_INVALID');
    expectError(await purchase(user, { product_id: product.id, quantity: 1, expected_total: 3 }), 409, 'PRICE_CHANGED');
    const poor = await purchase(user, { product_id: product.id, quantity: 1, expected_total: 4 });
    expectError(poor, 400, 'INSUFFICIENT_BALANCE');
    expect(poor.json.errors).toMatchObject({ required: 4, balance: 1 });
  });

  it('expected_total and coupon are validated strictly (422)', async () => {
    const product = await newProduct({ price: 4, stock: 5 });
    const user = await newUser({ balance: 10 });
    for (const body of [
      { expected_total: 4.005 },
      { expected_total: '4' },
      { expected_total: -0.01 },
      { expected_total: -4 },
      { coupon: 12 },
      { coupon: '' },
      { coupon: 'X'.repeat(65) },
    ]) {
      const res = await purchase(user, { product_id: product.id, quantity: 1, ...body });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(Object.keys(res.json.errors)).toEqual([Object.keys(body)[0]]);
    }
    await expectNothingCharged(user, product.id, 10, 5);
  });
});

describe('replays after a price change', () => {
  it('an Idempotency-Key replay answers the first order as it was', async () => {
    const product = await newProduct({ price: 2, stock: 5 });
    const user = await newUser({ balance: 50 });
    const code = await insertCoupon({ percent_off: 25 });
    const key = unique('idem');
    const body = { product_id: product.id, quantity: 2, coupon: code };
    const first = await purchase(user, body, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(201);
    expect(first.json.data).toMatchObject({ unit_price: 2, total_amount: 3, discount_amount: 1, coupon: code });
    await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { price: 3 } });
    await env.DB.prepare('UPDATE coupons SET active = 0 WHERE code = ?').bind(code).run();
    const replay = await purchase(user, body, { 'Idempotency-Key': key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(await balanceOf(user)).toBe(47);
  });
});

describe('GET /orders/quote', () => {
  it('answers the purchase errors but not the balance, and changes nothing', async () => {
    const product = await newProduct({ price: 4, stock: 3, allowedQuantities: [1, 3, 5] });
    const user = await newUser();
    const ok = await quote(user, `product_id=${product.id}&quantity=3`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.data).toEqual({ product_id: product.id, quantity: 3, list_unit_price: 4, unit_price: 4, discount_amount: 0, coupon: null, total_amount: 12 });
    // The URL template filled in part: an empty coupon is no coupon.
    expect((await quote(user, `product_id=${product.id}&quantity=3&coupon=`)).json).toEqual(ok.json);
    expectError(await quote(user, `product_id=${product.id}&quantity=3&coupon=${'X'.repeat(65)}`), 422, 'VALIDATION_FAILED');
    expectError(await quote(user, `product_id=${product.id}&quantity=2`), 400, 'INVALID_PACK_SIZE');
    expectError(await quote(user, `product_id=${product.id}&quantity=5`), 400, 'INSUFFICIENT_STOCK');
    expectError(await quote(user, 'product_id=999999999&quantity=1'), 404, 'NOT_FOUND');
    const inactive = await newProduct({ price: 4, stock: 3, active: false });
    expectError(await quote(user, `product_id=${inactive.id}&quantity=1`), 400, 'PRODUCT_UNAVAILABLE');
    for (const query of [`product_id=${product.id}`, 'quantity=1', `product_id=${product.id}&quantity=0`, `product_id=${product.id}&quantity=1001`, `product_id=abc&quantity=1`, `product_id=${product.id}&quantity=1.5`]) {
      expectError(await quote(user, query), 422, 'VALIDATION_FAILED');
    }
    expectError(await call(`/orders/quote?product_id=${product.id}&quantity=1`), 401, 'UNAUTHORIZED');
    const stock = await env.DB.prepare('SELECT stock_count FROM products WHERE id = ?').bind(product.id).first<{ stock_count: number }>();
    expect(stock!.stock_count).toBe(3);
  });

  it('a buyer without money still gets the quote; buying it then answers INSUFFICIENT_BALANCE', async () => {
    const product = await newProduct({ price: 4, stock: 3 });
    const user = await newUser();
    expect((await quote(user, `product_id=${product.id}&quantity=1`)).status).toBe(200);
    expectError(await buy(user, product.id, 1), 400, 'INSUFFICIENT_BALANCE');
  });
});

describe('the ledger signs, a CHECK of the database (the backstop under free orders)', () => {
  const row = (type: string, amountCents: number, userId: number) =>
    env.DB.prepare(
      `INSERT INTO wallet_transactions (user_id, type, amount_cents, balance_after_cents, description, operation_id, created_at)
       VALUES (?, ?, ?, 100000, 'check', ?, '2026-01-01T00:00:00.000Z')`,
    )
      .bind(userId, type, amountCents, unique('op'))
      .run();

  it('refuses a purchase that credits, a refund that debits, a deposit that is not a credit and an adjustment of 0', async () => {
    const user = await newUser();
    for (const [type, amount] of [['purchase', 1], ['refund', -1], ['deposit', 0], ['deposit', -1], ['adjustment', 0]] as const) {
      await expect(row(type, amount, user.id), `${type} ${amount}`).rejects.toThrow(/CHECK constraint failed/);
    }
    for (const [type, amount] of [['purchase', 0], ['purchase', -1], ['refund', 0], ['refund', 1], ['deposit', 1], ['adjustment', -1]] as const) {
      await expect(row(type, amount, user.id), `${type} ${amount}`).resolves.toBeTruthy();
    }
  });
});
