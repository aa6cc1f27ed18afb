import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { Bindings } from '../../src/env';
import { auditLedger } from '../../src/services/operator/ledger-audit';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { balanceOf, call, deliverWebhook, expectError, newProduct, newUser, unique, type TestUser, setStockCount } from '../helpers';
import { callWithQueue, send } from '../email-helpers';
import { apiUrl, depositTransactions, fakeVendor, INVOICE_ENDPOINT, notify, paidNotification, SLOT_OF, varsFor, vendorSays, type Vendor } from '../vendors';

// "Pay for this order": a deposit that carries an order buys it with the wallet in the batch that credits it, by
// every credit path, with every rule of POST /orders at credit time; the credit stands when it cannot be bought.

const MINUTE = 60_000;

interface OrderAsk {
  product_id: number;
  quantity: number;
  coupon?: string;
  expected_total: number;
}

async function depositFor(user: TestUser | string, amount: number, order: OrderAsk, gateway = 'gateway_one') {
  const key = typeof user === 'string' ? user : user.key;
  return call('/wallet/deposit', { key, body: { amount, gateway, order } });
}

async function paidDeposit(user: TestUser | string, amount: number, order: OrderAsk) {
  const res = await depositFor(user, amount, order);
  expect(res.status, res.text).toBe(200);
  expect(res.json.data).toMatchObject({ order_id: null, order_error: null, status: 'pending' });
  return res.json.data.deposit_id as number;
}

const paidWebhook = (depositId: number, amount: number) =>
  deliverWebhook('gateway_one', { deposit_id: depositId, status: 'paid', amount, transaction_id: unique('tx') });

const statusOf = async (user: TestUser, depositId: number) => {
  const res = await call(`/wallet/deposits/${depositId}/status`, { key: user.key });
  expect(res.status, res.text).toBe(200);
  return res.json.data as { status: string; order_id: number | null; order_error: string | null };
};

const ordersOf = async (userId: number) =>
  (await env.DB.prepare('SELECT id, quantity, total_amount_cents AS total FROM orders WHERE user_id = ?').bind(userId).all<{ id: number; quantity: number; total: number }>())
    .results;

const narrowKey = async (user: TestUser, body: Record<string, unknown>) => {
  const res = await call('/api-keys', { key: user.key, body: { name: 'narrow', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.json.data.key as string;
};

describe('POST /wallet/deposit with an order', () => {
  it('needs the orders scope as well as deposits (403 INSUFFICIENT_SCOPE naming it), and nothing is stored', async () => {
    const user = await newUser();
    const product = await newProduct({ price: 4, stock: 3 });
    const key = await narrowKey(user, { scopes: ['deposits', 'read'] });
    const res = await depositFor(key, 8, { product_id: product.id, quantity: 2, expected_total: 8 });
    expectError(res, 403, 'INSUFFICIENT_SCOPE');
    expect(res.json.errors).toEqual({ scope: ['orders'] });
    // The same key still makes a plain deposit.
    expect((await call('/wallet/deposit', { key, body: { amount: 8, gateway: 'gateway_one' } })).status).toBe(200);
    const both = await narrowKey(user, { scopes: ['deposits', 'orders'] });
    expect((await depositFor(both, 8, { product_id: product.id, quantity: 2, expected_total: 8 })).status).toBe(200);
  });

  it("refuses an order a purchase would refuse now (price lock, product, pack size, stock) with the purchase's error; nothing stored", async () => {
    const user = await newUser();
    const product = await newProduct({ price: 4, stock: 3, allowedQuantities: [1, 2] });
    const before = (await env.DB.prepare('SELECT count(*) AS n FROM deposits WHERE user_id = ?').bind(user.id).first<{ n: number }>())!.n;
    const changed = await depositFor(user, 8, { product_id: product.id, quantity: 2, expected_total: 7.99 });
    expectError(changed, 409, 'PRICE_CHANGED');
    expect(changed.json.errors).toEqual({ expected_total: 7.99, total: 8 });
    expectError(await depositFor(user, 8, { product_id: 999_999_999, quantity: 1, expected_total: 4 }), 404, 'NOT_FOUND');
    expectError(await depositFor(user, 12, { product_id: product.id, quantity: 3, expected_total: 12 }), 400, 'INVALID_PACK_SIZE');
    expectError(await depositFor(user, 8, { product_id: product.id, quantity: 2, coupon: 'NOPE-NOPE', expected_total: 8 }), 400, 'COUPON_INVALID');
    const invalid = await depositFor(user, 8, { product_id: product.id, quantity: 2 } as OrderAsk);
    expectError(invalid, 422, 'VALIDATION_FAILED');
    expect((await env.DB.prepare('SELECT count(*) AS n FROM deposits WHERE user_id = ?').bind(user.id).first<{ n: number }>())!.n).toBe(before);
  });
});

describe('the credit buys the order in the same batch', () => {
  it('by a notification: the order is bought at the locked total, the deposit names it, a repeated notification buys nothing more', async () => {
    const user = await newUser();
    const product = await newProduct({ price: 4, stock: 3 });
    const depositId = await paidDeposit(user, 8, { product_id: product.id, quantity: 2, expected_total: 8 });
    expect((await paidWebhook(depositId, 8)).status).toBe(200);
    const status = await statusOf(user, depositId);
    const [order] = await ordersOf(user.id);
    expect(status).toMatchObject({ status: 'paid', order_id: order.id, order_error: null });
    expect(order).toMatchObject({ quantity: 2, total: 800 });
    expect(await balanceOf(user)).toBe(0);
    const items = await call(`/orders/${order.id}`, { key: user.key });
    expect(items.json.data.stock_items).toHaveLength(2);
    expect(items.json.data).toMatchObject({ coupon_amount: 0, total_amount: 8 });
    // The list of deposits says it too.
    expect((await call('/wallet/deposits', { key: user.key })).json.data[0]).toMatchObject({ id: depositId, order_id: order.id, order_error: null });

    for (let i = 0; i < 3; i++) expect((await paidWebhook(depositId, 8)).status).toBe(200);
    expect(await ordersOf(user.id)).toHaveLength(1);
    expect(await depositTransactions(depositId)).toBe(1);
    expect(await balanceOf(user)).toBe(0);

    // deposit.paid carries both; order.created follows it.
    const events = (
      await env.DB.prepare("SELECT type, snapshot FROM events WHERE user_id = ? AND type IN ('deposit.paid', 'order.created') ORDER BY seq").bind(user.id).all<{ type: string; snapshot: string }>()
    ).results;
    expect(events.map((e) => e.type)).toEqual(['deposit.paid', 'order.created']);
    expect(JSON.parse(events[0].snapshot)).toMatchObject({ orderId: order.id, orderError: null });
  });

  it('by "Mark paid" (the operator), with a coupon: the order stores the coupon part (coupon_amount)', async () => {
    const user = await newUser();
    const product = await newProduct({ price: 10, stock: 2 });
    const code = `PAY${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
    expect((await call('/admin/coupons', { admin: true, body: { code, percent_off: 25 } })).status).toBe(201);
    const depositId = await paidDeposit(user, 7.5, { product_id: product.id, quantity: 1, coupon: code.toLowerCase(), expected_total: 7.5 });
    const res = await call(`/admin/deposits/${depositId}/mark-paid`, { method: 'POST', admin: true });
    expect(res.status, res.text).toBe(200);
    const status = await statusOf(user, depositId);
    expect(status.order_error).toBeNull();
    const order = (await call(`/orders/${status.order_id}`, { key: user.key })).json.data;
    expect(order).toMatchObject({ coupon: code, coupon_amount: 2.5, discount_amount: 2.5, total_amount: 7.5 });
    expect(await balanceOf(user)).toBe(0);
  });

  it('a deposit that pays more than the order keeps the rest in the wallet', async () => {
    const user = await newUser();
    const product = await newProduct({ price: 3, stock: 1 });
    const depositId = await paidDeposit(user, 10, { product_id: product.id, quantity: 1, expected_total: 3 });
    await paidWebhook(depositId, 10);
    expect((await statusOf(user, depositId)).order_id).not.toBeNull();
    expect(await balanceOf(user)).toBe(7);
    // The wallet could pay for the order again: a repeated notification still buys nothing more.
    await newProduct({ price: 1, stock: 0 });
    await call(`/admin/products/${product.id}/stock`, { admin: true, body: { items: ['MORE-1', 'MORE-2'].map((i) => `${i}-${depositId}`) } });
    expect((await paidWebhook(depositId, 10)).status).toBe(200);
    expect(await ordersOf(user.id)).toHaveLength(1);
    expect(await balanceOf(user)).toBe(7);
  });
});

describe('refused at credit time: the credit stands, nothing is bought, order_error says why', () => {
  const refusedCase = async (
    name: string,
    code: string,
    between: (ctx: { user: TestUser; product: { id: number } }) => Promise<void>,
    keyOf?: (user: TestUser) => Promise<string>,
  ) =>
    it(name, async () => {
      const user = await newUser();
      const product = await newProduct({ price: 4, stock: 2 });
      const key = keyOf ? await keyOf(user) : user.key;
      const depositId = await paidDeposit(key, 8, { product_id: product.id, quantity: 2, expected_total: 8 });
      await between({ user, product });
      const stockBefore = (await env.DB.prepare('SELECT stock_count AS n FROM products WHERE id = ?').bind(product.id).first<{ n: number }>())!.n;
      expect((await paidWebhook(depositId, 8)).status).toBe(200);
      expect(await statusOf(user, depositId)).toMatchObject({ status: 'paid', order_id: null, order_error: code });
      expect(await ordersOf(user.id)).toHaveLength(0);
      expect(await balanceOf(user)).toBe(8);
      expect((await env.DB.prepare('SELECT stock_count AS n FROM products WHERE id = ?').bind(product.id).first<{ n: number }>())!.n).toBe(stockBefore);
      // deposit.paid says so; no order.created.
      const snapshot = await env.DB.prepare("SELECT snapshot FROM events WHERE type = 'deposit.paid' AND object_id = ?").bind(depositId).first<{ snapshot: string }>();
      expect(JSON.parse(snapshot!.snapshot)).toMatchObject({ orderId: null, orderError: code });
      expect(await env.DB.prepare("SELECT 1 FROM events WHERE type = 'order.created' AND user_id = ?").bind(user.id).first()).toBeNull();
    });

  refusedCase('stock gone', 'INSUFFICIENT_STOCK', async ({ product }) => {
    const other = await newUser({ balance: 10 });
    expect((await call('/orders', { key: other.key, body: { product_id: product.id, quantity: 1 } })).status).toBe(201);
  });
  refusedCase('price moved', 'PRICE_CHANGED', async ({ product }) => {
    expect((await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { price: 4.5 } })).status).toBe(200);
  });
  refusedCase('product deactivated', 'PRODUCT_UNAVAILABLE', async ({ product }) => {
    expect((await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { active: false } })).status).toBe(200);
  });
  refusedCase(
    "the spend limit of the key that made the deposit",
    'SPEND_LIMIT_REACHED',
    async () => {},
    (user) => narrowKey(user, { scopes: ['deposits', 'orders', 'read'], spend_limit_per_day: 5 }),
  );
  it('a disabled account: the credit stands, nothing is bought (UNAUTHORIZED)', async () => {
    const user = await newUser();
    const product = await newProduct({ price: 4, stock: 2 });
    const depositId = await paidDeposit(user, 8, { product_id: product.id, quantity: 2, expected_total: 8 });
    expect((await call(`/admin/users/${user.id}`, { method: 'PATCH', admin: true, body: { disabled: true } })).status).toBe(200);
    expect((await paidWebhook(depositId, 8)).status).toBe(200);
    const row = await env.DB.prepare('SELECT status, order_id, order_error FROM deposits WHERE id = ?').bind(depositId).first();
    expect(row).toEqual({ status: 'paid', order_id: null, order_error: 'UNAUTHORIZED' });
    expect(await ordersOf(user.id)).toHaveLength(0);
    expect((await env.DB.prepare('SELECT balance_cents AS b FROM users WHERE id = ?').bind(user.id).first<{ b: number }>())!.b).toBe(800);
  });

  it('a stock count out of step with the items refuses the order, never the credit', async () => {
    const user = await newUser();
    const product = await newProduct({ price: 4, stock: 1 });
    await setStockCount(product.id, 5);
    const depositId = await paidDeposit(user, 8, { product_id: product.id, quantity: 2, expected_total: 8 });
    expect((await paidWebhook(depositId, 8)).status).toBe(200);
    expect(await statusOf(user, depositId)).toMatchObject({ status: 'paid', order_id: null, order_error: 'INSUFFICIENT_STOCK' });
    expect(await balanceOf(user)).toBe(8);
    await setStockCount(product.id, 1);
  });

  it('a deposit that does not cover the order (the wallet had less than the rest)', async () => {
    const user = await newUser();
    const product = await newProduct({ price: 4, stock: 2 });
    const depositId = await paidDeposit(user, 1, { product_id: product.id, quantity: 2, expected_total: 8 });
    await paidWebhook(depositId, 1);
    expect(await statusOf(user, depositId)).toMatchObject({ status: 'paid', order_id: null, order_error: 'INSUFFICIENT_BALANCE' });
    expect(await balanceOf(user)).toBe(1);
  });
});

/** A deposit with an order on a faked vendor's slot, the vendor saying it is paid. */
async function vendorOrderDeposit(vendor: Vendor, user: TestUser, product: { id: number }) {
  const invoiceId = `inv_${crypto.randomUUID().slice(0, 8)}`;
  const { path, answer } = INVOICE_ENDPOINT[vendor];
  fakeVendor('post', `${apiUrl(vendor)}${path}`, answer(`https://pay.${vendor}.test/${invoiceId}`, invoiceId));
  const created = await call('/wallet/deposit', {
    key: user.key,
    body: { amount: 5, gateway: SLOT_OF[vendor], order: { product_id: product.id, quantity: 2, expected_total: 5 } },
    vars: varsFor(vendor),
  });
  expect(created.status, created.text).toBe(200);
  const id = created.json.data.deposit_id as number;
  const row = (await env.DB.prepare('SELECT reference FROM deposits WHERE id = ?').bind(id).first<{ reference: string }>())!;
  const deposit = { id, reference: row.reference, invoiceId, amount: 5 };
  vendorSays(vendor, deposit, 'paid');
  return deposit;
}

const setAsideOthers = (vendor: Vendor) =>
  env.DB.prepare('UPDATE deposits SET last_checked_at = ? WHERE provider = ?').bind(new Date(Date.now() + 6 * MINUTE).toISOString(), vendor).run();

describe('the other credit paths buy it too', () => {
  it("an operator's refresh (the vendor says paid)", async () => {
    const user = await newUser();
    const product = await newProduct({ price: 2.5, stock: 2 });
    const deposit = await vendorOrderDeposit('stripe', user, product);
    const res = await call(`/admin/deposits/${deposit.id}/refresh`, { method: 'POST', admin: true, vars: varsFor('stripe') });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ outcome: 'credited', deposit: { status: 'paid' } });
    const [order] = await ordersOf(user.id);
    expect(await statusOf(user, deposit.id)).toMatchObject({ order_id: order.id, order_error: null });
    expect(await balanceOf(user)).toBe(0);
  });

  it('the scheduled lookup', async () => {
    await setAsideOthers('stripe');
    const user = await newUser();
    const product = await newProduct({ price: 2.5, stock: 2 });
    const deposit = await vendorOrderDeposit('stripe', user, product);
    const report = await runScheduledJobs({ ...env, ...varsFor('stripe') } as Bindings, Date.now() + 6 * MINUTE);
    expect(report.poll.changed).toBeGreaterThanOrEqual(1);
    const [order] = await ordersOf(user.id);
    expect(await statusOf(user, deposit.id)).toMatchObject({ status: 'paid', order_id: order.id, order_error: null });
    expect(await balanceOf(user)).toBe(0);
  });
});

describe('the race: 8 notifications, a refresh and the scheduled poll for one paid deposit with an order', () => {
  it('one credit and one order, the ledger audit clean', async () => {
    const vendor: Vendor = 'stripe';
    // Other tests' open stripe deposits would take the poll's places.
    await setAsideOthers(vendor);
    for (let round = 0; round < 2; round++) {
      const user = await newUser();
      const product = await newProduct({ price: 2.5, stock: 4 });
      const deposit = await vendorOrderDeposit(vendor, user, product);
      const id = deposit.id;
      const [body, headers] = await paidNotification(vendor, deposit);
      const results = await Promise.all([
        ...Array.from({ length: 8 }, () => notify(vendor, body, headers)),
        call(`/admin/deposits/${id}/refresh`, { method: 'POST', admin: true, vars: varsFor(vendor) }),
        runScheduledJobs({ ...env, ...varsFor(vendor) } as Bindings, Date.now() + 6 * MINUTE),
      ]);
      for (const res of results.slice(0, 9) as Array<{ status: number; text: string }>) expect(res.status, res.text).toBe(200);
      expect(await depositTransactions(id)).toBe(1);
      const orders = await ordersOf(user.id);
      expect(orders).toHaveLength(1);
      expect(await statusOf(user, id)).toMatchObject({ status: 'paid', order_id: orders[0].id, order_error: null });
      expect(await balanceOf(user)).toBe(0);
      const purchases = await env.DB.prepare("SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ? AND type = 'purchase'").bind(user.id).first<{ n: number }>();
      expect(purchases!.n).toBe(1);
    }
    expect(await auditLedger(env.DB)).toEqual([]);
  });
});

describe('the emails of a deposit that pays for an order', () => {
  it('bought: deposit_credited names the order and the receipt follows (discount split); refused: it says why and that the money is in the wallet', async () => {
    const user = await newUser();
    const product = await newProduct({ price: 5, stock: 2 });
    const code = `MAIL${crypto.randomUUID().slice(0, 6).toUpperCase()}`;
    expect((await call('/admin/coupons', { admin: true, body: { code, amount_off: 1 } })).status).toBe(201);
    const bought = await paidDeposit(user, 4, { product_id: product.id, quantity: 1, coupon: code, expected_total: 4 });
    const { res, jobs } = await callWithQueue(`/admin/deposits/${bought}/mark-paid`, { admin: true, method: 'POST' });
    expect(res.status, res.text).toBe(200);
    const { sent } = await send(jobs);
    const credited = sent.find((m) => m.subject.endsWith('deposit credited'))!;
    const receipt = sent.find((m) => m.subject.includes('receipt'))!;
    const [order] = await ordersOf(user.id);
    const orderNumber = (await call(`/orders/${order.id}`, { key: user.key })).json.data.order_number;
    expect(credited.text).toContain(`Your order ${orderNumber} was made with it.`);
    expect(receipt.text).toContain(`Coupon ${code}: $1.00`);
    expect(receipt.text).toContain('Discount (volume price and yours): $0.00');

    const refused = await paidDeposit(user, 5, { product_id: product.id, quantity: 1, expected_total: 5 });
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { active: false } });
    const second = await callWithQueue(`/admin/deposits/${refused}/mark-paid`, { admin: true, method: 'POST' });
    const mails = (await send(second.jobs)).sent;
    expect(mails).toHaveLength(1);
    expect(mails[0].text).toContain(
      'The order you paid for could not be made: the product is no longer for sale. Nothing was bought; the money is in your wallet, ready to use.',
    );
  });
});
