import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { buy, call, expectError, fund, newDeposit, newProduct, newUser, signedWebhook, type TestUser } from '../helpers';

// The event log (transactional outbox): every reported change writes its event in its own batch, and GET /events,
// GET /events/{id} read them back. The users of this file have no webhook endpoint, so nothing is delivered here
// (test/events/delivery.test.ts covers delivery). Storage is shared between the tests of this file.

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

async function eventsOf(user: TestUser, query = '') {
  const res = await call(`/events${query}`, { key: user.key });
  expect(res.status, res.text).toBe(200);
  return res.json.data as Array<{ id: string; type: string; created_at: string; data: { object: any } }>;
}

const count = async (sql: string, ...params: unknown[]) =>
  (await env.DB.prepare(sql).bind(...params).first<{ n: number }>())!.n;

const eventsInDb = (user: TestUser) => count('SELECT count(*) AS n FROM events WHERE user_id = ?', user.id);

/** An order without its delivered items: how an event renders it. */
// An order's event carries the order as rendered, without its items and its warranty claims (GET /orders/{id} adds both).
const withoutItems = ({ stock_items: _items, claims: _claims, ...order }: Record<string, unknown>) => order;

async function webhook(gateway: string, payload: Record<string, unknown>) {
  const signed = await signedWebhook(gateway, payload);
  return call(`/webhooks/${gateway}`, { method: 'POST', body: signed.body, headers: signed.headers });
}

describe('events are written with the change they report', () => {
  it('a purchase writes order.created: the order exactly as GET /orders/{id} renders it, without its items', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2.5, stock: 3 });
    const bought = await buy(user, product.id, 2);
    expect(bought.status).toBe(201);

    const [created, adjusted] = await eventsOf(user);
    expect(created).toMatchObject({ type: 'order.created', created_at: bought.json.data.created_at });
    expect(created.id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
    const order = (await call(`/orders/${bought.json.data.id}`, { key: user.key })).json.data;
    expect(created.data.object).toEqual(withoutItems(order));
    expect(JSON.stringify(created)).not.toContain(order.stock_items[0]);
    // The funding of newUser() is an admin adjustment: balance.adjusted with the ledger row.
    const [transaction] = (await call('/wallet/transactions', { key: user.key })).json.data.filter((t: any) => t.type === 'adjustment');
    expect(adjusted).toMatchObject({ type: 'balance.adjusted', data: { object: transaction } });
  });

  it('a refused purchase writes no event', async () => {
    const user = await newUser();
    const product = await newProduct({ price: 5, stock: 1 });
    expectError(await buy(user, product.id), 400, 'INSUFFICIENT_BALANCE');
    expectError(await buy(user, 999_999), 404, 'NOT_FOUND');
    expect(await eventsInDb(user)).toBe(0);
  });

  it('a purchase whose batch rolls back leaves no event: two purchases racing on one Idempotency-Key write one', async () => {
    const user = await newUser({ balance: 20 });
    const product = await newProduct({ price: 1, stock: 10 });
    const headers = { 'Idempotency-Key': 'race-for-one-event' };
    const results = await Promise.all(
      Array.from({ length: 6 }, () => call('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 }, headers })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(await count("SELECT count(*) AS n FROM orders WHERE user_id = ?", user.id)).toBe(1);
    expect((await eventsOf(user, '?type=order.created')).map((e) => e.data.object.id)).toEqual([results[0].json.data.id]);
  });

  it('a change whose event cannot be written does not happen (the event is in the change\'s own batch)', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 3 });
    // A trigger stands in for a failure of the event's INSERT, for this user's purchases only.
    await env.DB.prepare(
      `CREATE TRIGGER fail_order_event_${user.id} BEFORE INSERT ON events
       WHEN NEW.user_id = ${user.id} AND NEW.type = 'order.created' BEGIN SELECT RAISE(ABORT, 'event store refused'); END`,
    ).run();
    try {
      expect((await buy(user, product.id)).status).toBe(500);
    } finally {
      await env.DB.prepare(`DROP TRIGGER fail_order_event_${user.id}`).run();
    }
    expect(await count('SELECT count(*) AS n FROM orders WHERE user_id = ?', user.id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ? AND type = 'purchase'", user.id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'", product.id)).toBe(3);
    expect((await call('/wallet/balance', { key: user.key })).json.data.balance).toBe(10);
    expect((await buy(user, product.id)).status).toBe(201);
  });

  it('a cancel writes order.cancelled with the cancelled order; a refused cancel writes nothing', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 3, stock: 2 });
    const orderId = (await buy(user, product.id)).json.data.id;
    const cancelled = await call(`/orders/${orderId}/cancel`, { key: user.key, method: 'POST' });
    expect(cancelled.status).toBe(200);
    expectError(await call(`/orders/${orderId}/cancel`, { key: user.key, method: 'POST' }), 400, 'ORDER_NOT_CANCELLABLE');

    const events = await eventsOf(user, '?type=order.cancelled');
    expect(events).toHaveLength(1);
    expect(events[0].data.object).toEqual(cancelled.json.data.order);
    expect(events[0].data.object.status).toBe('cancelled');
  });

  it('cancelling a completed order is refused and reports nothing', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ stock: 1 });
    const orderId = (await buy(user, product.id)).json.data.id;
    await env.DB.prepare("UPDATE orders SET status = 'completed' WHERE id = ?").bind(orderId).run();
    expectError(await call(`/orders/${orderId}/cancel`, { key: user.key, method: 'POST' }), 400, 'ORDER_NOT_CANCELLABLE');
    expect(await eventsOf(user, '?type=order.cancelled')).toEqual([]);
  });

  it('a credited deposit writes deposit.paid once (a replayed webhook reports nothing new)', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 12.5 });
    const paid = { deposit_id: deposit.deposit_id, status: 'paid', amount: 12.5, transaction_id: 'tx-events-1' };
    expect((await webhook('gateway_one', paid)).status).toBe(200);
    expect((await webhook('gateway_one', paid)).status).toBe(200);
    expect((await call(`/admin/deposits/${deposit.deposit_id}/mark-paid`, { admin: true, method: 'POST' })).status).toBe(200);

    const events = await eventsOf(user, '?type=deposit.paid');
    expect(events).toHaveLength(1);
    const [listed] = (await call('/wallet/deposits', { key: user.key })).json.data;
    expect(events[0].data.object).toEqual(listed);
    expect(listed.status).toBe('paid');
  });

  it('a failed deposit writes deposit.failed; a failed verdict on a paid deposit writes nothing', async () => {
    const user = await newUser();
    const failing = await newDeposit(user, { amount: 5 });
    const payload = (d: { deposit_id: number }, status: string) => ({ deposit_id: d.deposit_id, status, amount: 5, transaction_id: `tx-${status}` });
    expect((await webhook('gateway_one', payload(failing, 'failed'))).status).toBe(200);
    expect((await webhook('gateway_one', payload(failing, 'failed'))).status).toBe(200);

    const paid = await newDeposit(user, { amount: 5 });
    expect((await webhook('gateway_one', payload(paid, 'paid'))).status).toBe(200);
    expect((await webhook('gateway_one', payload(paid, 'failed'))).status).toBe(200);

    const failed = await eventsOf(user, '?type=deposit.failed');
    expect(failed.map((e) => [e.data.object.id, e.data.object.status])).toEqual([[failing.deposit_id, 'failed']]);
    expect(await eventsOf(user, '?type=deposit.paid')).toHaveLength(1);
  });

  it('a gateway expired verdict writes deposit.expired', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 7 });
    const res = await webhook('gateway_one', { deposit_id: deposit.deposit_id, status: 'expired', amount: 7, transaction_id: 'tx-exp' });
    expect(res.status).toBe(200);
    const [expired] = await eventsOf(user, '?type=deposit.expired');
    expect(expired.data.object).toMatchObject({ id: deposit.deposit_id, status: 'expired' });
  });

  it('an admin adjustment writes balance.adjusted; a refused debit writes nothing', async () => {
    const user = await newUser();
    expectError(await call(`/admin/users/${user.id}/balance-adjustments`, { admin: true, body: { amount: -1, description: 'too much' } }), 400, 'INSUFFICIENT_BALANCE');
    expect(await eventsInDb(user)).toBe(0);
    const credit = await fund(user, 4.25);
    const [adjusted] = await eventsOf(user);
    expect(adjusted).toMatchObject({ type: 'balance.adjusted', data: { object: { ...credit, amount: 4.25, balance_after: 4.25 } } });
  });
});

describe('scheduled jobs write one event per row they change', () => {
  it('order.completed for each held order and deposit.expired for each overdue deposit, with the row as changed', async () => {
    const user = await newUser({ balance: 50 });
    const product = await newProduct({ price: 1, stock: 5 });
    const orderIds: number[] = [];
    for (let i = 0; i < 3; i++) orderIds.push((await buy(user, product.id)).json.data.id);
    const young = (await buy(user, product.id)).json.data.id;
    const old = iso(Date.now() - 2 * DAY);
    for (const id of orderIds) await env.DB.prepare('UPDATE orders SET created_at = ? WHERE id = ?').bind(old, id).run();
    const deposit = await newDeposit(user, { amount: 3 });
    await env.DB.prepare('UPDATE deposits SET expires_at = ? WHERE id = ?').bind(old, deposit.deposit_id).run();

    await runScheduledJobs(env);
    await runScheduledJobs(env);

    const completed = await eventsOf(user, '?type=order.completed');
    expect(completed.map((e) => e.data.object.id).sort()).toEqual([...orderIds].sort());
    expect(new Set(completed.map((e) => e.id)).size).toBe(3);
    for (const event of completed) {
      const order = (await call(`/orders/${event.data.object.id}`, { key: user.key })).json.data;
      expect(event.data.object).toEqual(withoutItems(order));
      expect(event.data.object.status).toBe('completed');
    }
    expect(completed.some((e) => e.data.object.id === young)).toBe(false);
    const [expired] = await eventsOf(user, '?type=deposit.expired');
    expect(expired.data.object).toMatchObject({ id: deposit.deposit_id, status: 'expired' });
  });

  it('a backlog larger than one batch gets exactly one event per order', async () => {
    const user = await newUser();
    const product = await newProduct();
    const old = iso(Date.now() - 2 * DAY);
    const numbers = JSON.stringify(Array.from({ length: 320 }, (_, i) => `ORD-BACKLOG-${user.id}-${i}`));
    await env.DB.prepare(
      `INSERT INTO orders (order_number, user_id, product_id, product_name, quantity, unit_price_cents, total_amount_cents, list_unit_price_cents, status, created_at, updated_at)
       SELECT value, ?, ?, 'backlog', 1, 100, 100, 100, 'pending', ?, ? FROM json_each(?)`,
    )
      .bind(user.id, product.id, old, old, numbers)
      .run();
    await runScheduledJobs(env);
    expect(await count("SELECT count(*) AS n FROM orders WHERE user_id = ? AND status = 'completed'", user.id)).toBe(320);
    expect(await count("SELECT count(DISTINCT object_id) AS n FROM events WHERE user_id = ? AND type = 'order.completed'", user.id)).toBe(320);
    expect(await count("SELECT count(*) AS n FROM events WHERE user_id = ? AND snapshot NOT LIKE '%\"status\":\"completed\"%'", user.id)).toBe(0);
  });
});

describe('GET /events', () => {
  it('pages newest first, filters by type, and shows only the caller\'s events', async () => {
    const user = await newUser({ balance: 10 });
    const other = await newUser({ balance: 10 });
    const product = await newProduct({ stock: 5 });
    for (let i = 0; i < 3; i++) await buy(user, product.id);
    await buy(other, product.id);

    const res = await call('/events?per_page=2', { key: user.key });
    expect(res.json.meta).toEqual({ current_page: 1, per_page: 2, total: 4, total_pages: 2 });
    const all = await eventsOf(user, '?per_page=100');
    expect(all.map((e) => e.type)).toEqual(['order.created', 'order.created', 'order.created', 'balance.adjusted']);
    const created = all.map((e) => e.created_at);
    expect(created).toEqual([...created].sort().reverse());
    expect(res.json.data.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    expect((await eventsOf(user, '?type=order.created')).length).toBe(3);
    expect(await eventsOf(user, '?type=deposit.paid')).toEqual([]);
    const othersIds = new Set((await eventsOf(other)).map((e) => e.id));
    expect(all.some((e) => othersIds.has(e.id))).toBe(false);
  });

  it('rejects an unknown type or bad paging with 422, a missing key with 401', async () => {
    const user = await newUser();
    expectError(await call('/events?type=order.shipped', { key: user.key }), 422, 'VALIDATION_FAILED');
    expectError(await call('/events?per_page=101', { key: user.key }), 422, 'VALIDATION_FAILED');
    expectError(await call('/events'), 401, 'UNAUTHORIZED');
  });
});

describe('GET /events/{id}', () => {
  it('answers the event with its delivery attempts; another user\'s event is a 404, a malformed id a 422', async () => {
    const user = await newUser({ balance: 5 });
    const other = await newUser();
    const [event] = await eventsOf(user);
    const res = await call(`/events/${event.id}`, { key: user.key });
    expect(res.json.data).toEqual({ ...event, deliveries: [] });
    expectError(await call(`/events/${event.id}`, { key: other.key }), 404, 'NOT_FOUND');
    expectError(await call('/events/evt_000000000000000000000000', { key: user.key }), 404, 'NOT_FOUND');
    expectError(await call('/events/123', { key: user.key }), 422, 'VALIDATION_FAILED');
    expectError(await call(`/events/${event.id}`), 401, 'UNAUTHORIZED');
  });
});

describe('events are kept 30 days', () => {
  it('older events are no longer listed, and the scheduled job deletes them with their delivery attempts', async () => {
    const user = await newUser({ balance: 5 });
    await fund(user, 1);
    const [recent, old] = await eventsOf(user);
    const endpoint = await call('/webhook-endpoints', { key: user.key, body: { url: 'https://receiver.test/old', events: ['*'] } });
    await env.DB.prepare("INSERT INTO webhook_deliveries (event_id, endpoint_id, attempt, status_code, error, at) VALUES (?, ?, 1, 200, NULL, ?)")
      .bind(old.id, endpoint.json.data.id, iso(Date.now()))
      .run();
    await env.DB.prepare('UPDATE events SET created_at = ? WHERE id = ?').bind(iso(Date.now() - 31 * DAY), old.id).run();

    expect((await eventsOf(user)).map((e) => e.id)).toEqual([recent.id]);
    expectError(await call(`/events/${old.id}`, { key: user.key }), 404, 'NOT_FOUND');

    const report = await runScheduledJobs(env);
    expect(report.deletedEvents).toBeGreaterThanOrEqual(1);
    expect(await count('SELECT count(*) AS n FROM events WHERE id = ?', old.id)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM webhook_deliveries WHERE event_id = ?', old.id)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM events WHERE id = ?', recent.id)).toBe(1);
  });
});
