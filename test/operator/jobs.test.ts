import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { balanceOf, buy, call, expectError, newDeposit, newProduct, newUser, signedWebhook, unique, type TestUser } from '../helpers';

// Scheduled jobs (src/services/operator/jobs.ts, the worker's `scheduled` handler) run against a controlled clock: ages are set
// through env.DB, or the jobs are given a `nowMs` in the future. Storage is shared between the tests of this file:
// each test makes its own users, orders and deposits and only asserts on those (report counts are checked against
// what the database held just before the run).

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();

// ---------------------------------------------------------------------------------------------------------------
// Local helpers
// ---------------------------------------------------------------------------------------------------------------

async function placeOrder(user: TestUser, productId: number): Promise<number> {
  const res = await buy(user, productId, 1);
  expect(res.status, res.text).toBe(201);
  return res.json.data.id;
}

/** A user with `count` pending orders of one product (price 2.00, balance to spare). */
async function userWithOrders(count: number) {
  const user = await newUser({ balance: 100 });
  const product = await newProduct({ price: 2, stock: count });
  const orders: number[] = [];
  for (let i = 0; i < count; i++) orders.push(await placeOrder(user, product.id));
  return { user, product, orders };
}

async function setOrderCreatedAt(orderId: number, ms: number) {
  await env.DB.prepare('UPDATE orders SET created_at = ?, updated_at = ? WHERE id = ?').bind(iso(ms), iso(ms), orderId).run();
}

async function orderRow(orderId: number) {
  const row = await env.DB.prepare('SELECT status, updated_at FROM orders WHERE id = ?').bind(orderId).first<{ status: string; updated_at: string }>();
  expect(row, `order ${orderId}`).not.toBeNull();
  return row!;
}

async function setDepositExpiresAt(depositId: number, ms: number) {
  await env.DB.prepare('UPDATE deposits SET expires_at = ? WHERE id = ?').bind(iso(ms), depositId).run();
}

/** Read straight from D1: reading through the API would expire overdue deposits lazily and hide what the job did. */
async function depositRow(depositId: number) {
  const row = await env.DB.prepare('SELECT status, updated_at, paid_at FROM deposits WHERE id = ?')
    .bind(depositId)
    .first<{ status: string; updated_at: string; paid_at: string | null }>();
  expect(row, `deposit ${depositId}`).not.toBeNull();
  return row!;
}

async function count(sql: string, ...params: unknown[]) {
  const row = await env.DB.prepare(sql)
    .bind(...params)
    .first<{ n: number }>();
  return row!.n;
}

const overdueOrders = (nowMs: number) =>
  count("SELECT count(*) AS n FROM orders WHERE status = 'pending' AND created_at <= ?", iso(nowMs - 24 * HOUR));
const overdueDeposits = (nowMs: number) => count("SELECT count(*) AS n FROM deposits WHERE status = 'pending' AND expires_at <= ?", iso(nowMs));

const ledgerCount = (userId: number) => count('SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ?', userId);

/** The worker's own `scheduled` export, invoked as the runtime would. */
async function runScheduledHandler(scheduledTime: number) {
  const handler: ExportedHandler<Cloudflare.Env> = worker;
  const ctx = createExecutionContext();
  await handler.scheduled!(createScheduledController({ scheduledTime, cron: '*/5 * * * *' }), env, ctx);
  await waitOnExecutionContext(ctx);
}

// ---------------------------------------------------------------------------------------------------------------
// Orders: pending -> completed after ORDER_HOLD_HOURS
// ---------------------------------------------------------------------------------------------------------------

describe('scheduled job: completing held orders', () => {
  it('completes pending orders older than 24 h, leaves younger and cancelled ones alone', async () => {
    const { user, orders } = await userWithOrders(4);
    const [old, young, fresh, cancelled] = orders;
    const now = Date.now();
    await setOrderCreatedAt(old, now - 24 * HOUR - MINUTE);
    await setOrderCreatedAt(young, now - 24 * HOUR + MINUTE);
    const cancel = await call(`/orders/${cancelled}/cancel`, { method: 'POST', key: user.key });
    expect(cancel.status, cancel.text).toBe(200);
    await setOrderCreatedAt(cancelled, now - 48 * HOUR);
    const cancelledBefore = await orderRow(cancelled);
    const balance = await balanceOf(user);
    const ledger = await ledgerCount(user.id);

    const expected = await overdueOrders(now);
    const report = await runScheduledJobs(env, now);
    expect(report.completedOrders).toBe(expected);
    expect(report.completedOrders).toBeGreaterThanOrEqual(1);

    expect(await orderRow(old)).toEqual({ status: 'completed', updated_at: iso(now) });
    expect((await orderRow(young)).status).toBe('pending');
    expect((await orderRow(fresh)).status).toBe('pending');
    expect(await orderRow(cancelled)).toEqual(cancelledBefore);
    expect(cancelledBefore.status).toBe('cancelled');

    // as the buyer sees it; completing moves no money
    const detail = await call(`/orders/${old}`, { key: user.key });
    expect(detail.status, detail.text).toBe(200);
    expect(detail.json.data.status).toBe('completed');
    expect(await balanceOf(user)).toBe(balance);
    expect(await ledgerCount(user.id)).toBe(ledger);
    // The kept counts followed in the job's own statement (migrations/0030): the dashboard says what the orders say.
    const dashboard = (await call('/user/dashboard', { key: user.key })).json.data;
    expect([dashboard.total_orders, dashboard.pending_orders]).toEqual([4, 2]);
  });

  it('a completed order can no longer be cancelled (400 ORDER_NOT_CANCELLABLE, no refund)', async () => {
    const { user, orders } = await userWithOrders(1);
    const [order] = orders;
    const now = Date.now();
    await setOrderCreatedAt(order, now - 25 * HOUR);
    await runScheduledJobs(env, now);
    expect((await orderRow(order)).status).toBe('completed');

    const balance = await balanceOf(user);
    const ledger = await ledgerCount(user.id);
    expectError(await call(`/orders/${order}/cancel`, { method: 'POST', key: user.key }), 400, 'ORDER_NOT_CANCELLABLE');
    expect((await orderRow(order)).status).toBe('completed');
    expect(await balanceOf(user)).toBe(balance);
    expect(await ledgerCount(user.id)).toBe(ledger);
    expect(await count("SELECT count(*) AS n FROM stock_items WHERE order_id = ? AND status = 'sold'", order)).toBe(1);
  });

  it('uses the clock it is given: an order completes once nowMs is past its hold period', async () => {
    const { orders } = await userWithOrders(1);
    const [order] = orders;
    const createdAt = Date.parse((await env.DB.prepare('SELECT created_at FROM orders WHERE id = ?').bind(order).first<{ created_at: string }>())!.created_at);

    await runScheduledJobs(env, createdAt + 23 * HOUR);
    expect((await orderRow(order)).status).toBe('pending');
    await runScheduledJobs(env, createdAt + 24 * HOUR - SECOND);
    expect((await orderRow(order)).status).toBe('pending');
    await runScheduledJobs(env, createdAt + 24 * HOUR + SECOND);
    expect(await orderRow(order)).toEqual({ status: 'completed', updated_at: iso(createdAt + 24 * HOUR + SECOND) });
  });

  it('reads the hold period from ORDER_HOLD_HOURS', async () => {
    const { orders } = await userWithOrders(2);
    const [twoHours, halfHour] = orders;
    const now = Date.now();
    await setOrderCreatedAt(twoHours, now - 2 * HOUR);
    await setOrderCreatedAt(halfHour, now - 30 * MINUTE);
    await runScheduledJobs({ ...env, ORDER_HOLD_HOURS: '1' }, now);
    expect((await orderRow(twoHours)).status).toBe('completed');
    expect((await orderRow(halfHour)).status).toBe('pending');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Deposits: pending -> expired after expires_at
// ---------------------------------------------------------------------------------------------------------------

describe('scheduled job: expiring deposits', () => {
  it('expires pending deposits past expires_at; fresh, paid and failed ones are untouched', async () => {
    const user = await newUser({ balance: 1 });
    const now = Date.now();
    const overdue = await newDeposit(user, { amount: 10 });
    const fresh = await newDeposit(user, { amount: 11 });
    const paid = await newDeposit(user, { amount: 12 });
    const failed = await newDeposit(user, { amount: 13 });

    const markPaid = await call(`/admin/deposits/${paid.deposit_id}/mark-paid`, { method: 'POST', admin: true });
    expect(markPaid.status, markPaid.text).toBe(200);
    const signed = await signedWebhook('gateway_one', { deposit_id: failed.deposit_id, status: 'failed', amount: 13, transaction_id: unique('tx') });
    const fail = await call('/webhooks/gateway_one', { method: 'POST', body: signed.body, headers: signed.headers });
    expect(fail.status, fail.text).toBe(200);

    await setDepositExpiresAt(overdue.deposit_id, now - SECOND);
    await setDepositExpiresAt(fresh.deposit_id, now + MINUTE);
    await setDepositExpiresAt(paid.deposit_id, now - HOUR);
    await setDepositExpiresAt(failed.deposit_id, now - HOUR);
    const freshBefore = await depositRow(fresh.deposit_id);
    const paidBefore = await depositRow(paid.deposit_id);
    const failedBefore = await depositRow(failed.deposit_id);
    const balance = await balanceOf(user);
    const ledger = await ledgerCount(user.id);

    const expected = await overdueDeposits(now);
    const report = await runScheduledJobs(env, now);
    expect(report.expiredDeposits).toBe(expected);
    expect(report.expiredDeposits).toBeGreaterThanOrEqual(1);

    expect(await depositRow(overdue.deposit_id)).toMatchObject({ status: 'expired', updated_at: iso(now), paid_at: null });
    expect(await depositRow(fresh.deposit_id)).toEqual(freshBefore);
    expect(await depositRow(paid.deposit_id)).toEqual(paidBefore);
    expect(paidBefore.status).toBe('paid');
    expect(await depositRow(failed.deposit_id)).toEqual(failedBefore);
    expect(failedBefore.status).toBe('failed');
    expect(await balanceOf(user)).toBe(balance);
    expect(await ledgerCount(user.id)).toBe(ledger);
  });

  it('expires a fresh deposit once the clock passes its 60-minute expiry', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 5 });
    const expiresAt = Date.parse(deposit.expires_at);
    await runScheduledJobs(env, expiresAt - SECOND);
    expect((await depositRow(deposit.deposit_id)).status).toBe('pending');
    await runScheduledJobs(env, expiresAt + SECOND);
    expect((await depositRow(deposit.deposit_id)).status).toBe('expired');
    expect(await balanceOf(user)).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Concurrency, the scheduled handler, backlog
// ---------------------------------------------------------------------------------------------------------------

describe('scheduled job: runs', () => {
  it('two concurrent runs complete each order and expire each deposit once; a third run changes nothing', async () => {
    const { user, orders } = await userWithOrders(3);
    const now = Date.now();
    for (const order of orders) await setOrderCreatedAt(order, now - 30 * HOUR);
    const deposits = [await newDeposit(user, { amount: 1 }), await newDeposit(user, { amount: 2 })];
    for (const d of deposits) await setDepositExpiresAt(d.deposit_id, now - MINUTE);

    const expectedOrders = await overdueOrders(now);
    const expectedDeposits = await overdueDeposits(now);
    expect(expectedOrders).toBeGreaterThanOrEqual(3);
    expect(expectedDeposits).toBeGreaterThanOrEqual(2);

    const reports = await Promise.all([runScheduledJobs(env, now), runScheduledJobs(env, now)]);
    expect(reports[0].completedOrders + reports[1].completedOrders).toBe(expectedOrders);
    expect(reports[0].expiredDeposits + reports[1].expiredDeposits).toBe(expectedDeposits);
    for (const order of orders) expect(await orderRow(order)).toEqual({ status: 'completed', updated_at: iso(now) });
    for (const d of deposits) expect((await depositRow(d.deposit_id)).status).toBe('expired');

    const ordersAfter = await Promise.all(orders.map(orderRow));
    const depositsAfter = await Promise.all(deposits.map((d) => depositRow(d.deposit_id)));
    expect(await runScheduledJobs(env, now)).toMatchObject({ completedOrders: 0, expiredDeposits: 0 });
    await runScheduledJobs(env, now + MINUTE);
    expect(await Promise.all(orders.map(orderRow))).toEqual(ordersAfter);
    expect(await Promise.all(deposits.map((d) => depositRow(d.deposit_id)))).toEqual(depositsAfter);
  });

  it('the worker scheduled handler runs the jobs with controller.scheduledTime as its clock', async () => {
    const { user, orders } = await userWithOrders(2);
    const [overdue, fresh] = orders;
    const now = Date.now();
    await setOrderCreatedAt(overdue, now - 25 * HOUR);
    const deposit = await newDeposit(user, { amount: 4 });
    await setDepositExpiresAt(deposit.deposit_id, now - MINUTE);
    const freshDeposit = await newDeposit(user, { amount: 4 });

    await runScheduledHandler(now);
    expect(await orderRow(overdue)).toEqual({ status: 'completed', updated_at: iso(now) });
    expect((await orderRow(fresh)).status).toBe('pending');
    expect((await depositRow(deposit.deposit_id)).status).toBe('expired');
    expect((await depositRow(freshDeposit.deposit_id)).status).toBe('pending');

    const later = now + 25 * HOUR;
    await runScheduledHandler(later);
    expect(await orderRow(fresh)).toEqual({ status: 'completed', updated_at: iso(later) });
    expect((await depositRow(freshDeposit.deposit_id)).status).toBe('expired');
  });

  it('drains a backlog of more than one batch (10,001 orders, 350 deposits) in one run', async () => {
    const user = await newUser();
    const product = await newProduct({ price: 1 });
    const batch = unique('BACKLOG');
    const now = Date.now();
    const old = iso(now - 48 * HOUR);
    await env.DB.prepare(
      `INSERT INTO orders (order_number, user_id, product_id, product_name, quantity, unit_price_cents, total_amount_cents, list_unit_price_cents, status, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10001)
       SELECT ?1 || '-' || i, ?2, ?3, 'Backlog', 1, 100, 100, 100, 'pending', ?4, ?4 FROM n`,
    )
      .bind(batch, user.id, product.id, old)
      .run();
    await env.DB.prepare(
      `INSERT INTO deposits (user_id, amount_cents, gateway, status, external_id, expires_at, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 350)
       SELECT ?1, 100, 'gateway_one', 'pending', ?2 || '-' || i, ?3, ?3, ?3 FROM n`,
    )
      .bind(user.id, batch, old)
      .run();
    const ours = (status: string) => count('SELECT count(*) AS n FROM orders WHERE order_number LIKE ? AND status = ?', `${batch}-%`, status);
    const ourDeposits = (status: string) => count('SELECT count(*) AS n FROM deposits WHERE external_id LIKE ? AND status = ?', `${batch}-%`, status);
    expect(await ours('pending')).toBe(10_001);
    expect(await ourDeposits('pending')).toBe(350);

    const expectedOrders = await overdueOrders(now);
    const expectedDeposits = await overdueDeposits(now);
    const report = await runScheduledJobs(env, now);
    expect(report).toMatchObject({ completedOrders: expectedOrders, expiredDeposits: expectedDeposits });
    expect(await ours('completed')).toBe(10_001);
    expect(await ourDeposits('expired')).toBe(350);
    expect(await overdueOrders(now)).toBe(0);
    expect(await overdueDeposits(now)).toBe(0);
  });
});
