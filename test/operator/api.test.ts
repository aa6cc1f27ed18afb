import { env } from 'cloudflare:test';
import type { SQL } from 'drizzle-orm';
import { SQLiteAsyncDialect } from 'drizzle-orm/sqlite-core';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/crypto';
import { adjustBalance } from '../../src/services/payments/wallet';
import { operatorActor } from '../../src/services/accounts/audit-log';
import { ordersQuery } from '../../src/services/operator/orders';
import { usersQuery } from '../../src/services/operator/users';
import { lastDays } from '../../src/services/operator/overview';
import { sessionCaller } from '../../src/services/accounts/sessions';
import { useInvocationOptions } from '../contract';
import { signIn, visit } from '../dashboard-helpers';
import { balanceOf, buy, call, expectError, fund, newDeposit, newProduct, newUser, restock, unique, type TestUser } from '../helpers';
import type { RoundTrip } from '../production-d1';

// The operator console's JSON twin: roles, the admin reads, the audit log, disabled accounts and reset links.

const auditCount = async () => (await env.DB.prepare('SELECT count(*) AS n FROM audit_log').first<{ n: number }>())!.n;
const lastAudit = async () => (await call('/admin/audit-log?per_page=1', { admin: true })).json.data[0];

describe('roles', () => {
  it('every user has role "user"; PATCH /admin/users/{id} makes an operator, on the audit log', async () => {
    const user = await newUser();
    expect((await call(`/admin/users/${user.id}`, { admin: true })).json.data).toMatchObject({ role: 'user', disabled: false });
    const res = await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { role: 'operator' } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ id: user.id, role: 'operator', disabled: false, orders_count: 0, total_spent: 0 });
    expect(await lastAudit()).toMatchObject({ actor: 'admin_token', action: 'user.updated', target: `user:${user.id}`, details: { role: 'operator' } });
  });

  it('refuses an unknown role, an unknown user, a duplicate email (nothing written, no entry)', async () => {
    const [a, b] = [await newUser(), await newUser()];
    const before = await auditCount();
    expectError(await call(`/admin/users/${a.id}`, { admin: true, method: 'PATCH', body: { role: 'admin' } }), 422, 'VALIDATION_FAILED');
    expectError(await call(`/admin/users/999999999`, { admin: true, method: 'PATCH', body: { name: 'x' } }), 404, 'NOT_FOUND');
    expectError(await call(`/admin/users/${a.id}`, { admin: true, method: 'PATCH', body: { email: b.email.toUpperCase() } }), 422, 'VALIDATION_FAILED');
    expect(await auditCount()).toBe(before);
  });

  it('the admin routes answer 401 to an API key, whatever its role', async () => {
    const user = await newUser();
    await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { role: 'operator' } });
    expectError(await call('/admin/users', { key: user.key }), 401, 'UNAUTHORIZED');
    expectError(await call(`/admin/users/${user.id}`, { key: user.key, method: 'PATCH', body: { role: 'operator' } }), 401, 'UNAUTHORIZED');
  });
});

describe('the audit log', () => {
  it('records every admin write with its actor, never a password, key, token or stock item', async () => {
    const email = `${unique('audited')}@example.com`;
    const created = await call('/admin/users', { admin: true, body: { name: 'Audited', email, password: 'secret password 1' } });
    const userId = created.json.data.id;
    const apiKey = created.json.data.api_key;
    await call(`/admin/users/${userId}/balance-adjustments`, { admin: true, body: { amount: 12.5, description: 'support credit' } });
    const product = await newProduct({ price: 2 });
    await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { price: 3, active: false } });
    const items = await restock(product.id, 3, unique('SECRET-ITEM'));
    const deposit = await newDeposit({ id: userId, key: apiKey, email }, { amount: 5 });
    await call(`/admin/deposits/${deposit.deposit_id}/mark-paid`, { admin: true, method: 'POST' });
    const reset = await call(`/admin/users/${userId}/password-reset`, { admin: true, method: 'POST' });
    expect(reset.status, reset.text).toBe(201);

    const log = (await call('/admin/audit-log?per_page=7', { admin: true })).json.data.reverse();
    expect(log.map((e: { action: string }) => e.action)).toEqual([
      'user.created',
      'balance.adjusted',
      'product.created',
      'product.updated',
      'stock.added',
      'deposit.marked_paid',
      'password_reset.created',
    ]);
    expect(log.every((e: { actor: string }) => e.actor === 'admin_token')).toBe(true);
    expect(log[0]).toMatchObject({ target: `user:${userId}`, details: { name: 'Audited', email } });
    expect(log[1]).toMatchObject({ target: `user:${userId}`, details: { amount: 12.5, description: 'support credit' } });
    expect(log[3]).toMatchObject({ target: `product:${product.id}`, details: { price: 3, active: false } });
    expect(log[4]).toMatchObject({ target: `product:${product.id}`, details: { added: 3, skipped: 0 } });
    expect(log[5]).toMatchObject({ target: `deposit:${deposit.deposit_id}`, details: { amount: 5, user_id: userId } });
    expect(log[6]).toMatchObject({ target: `user:${userId}`, details: { expires_at: reset.json.data.expires_at } });
    const text = JSON.stringify(log);
    const token = reset.json.data.url.split('/').pop();
    for (const secret of ['secret password 1', apiKey, token, await sha256Hex(token), ...items]) expect(text).not.toContain(secret);
  });

  it('a refused write leaves no entry', async () => {
    const user = await newUser();
    const before = await auditCount();
    expectError(await call(`/admin/users/${user.id}/balance-adjustments`, { admin: true, body: { amount: -1, description: 'x' } }), 400, 'INSUFFICIENT_BALANCE');
    expectError(await call('/admin/products/999999999/stock', { admin: true, body: { items: ['a'] } }), 404, 'NOT_FOUND');
    expectError(await call('/admin/users/999999999/password-reset', { admin: true, method: 'POST' }), 404, 'NOT_FOUND');
    expect(await auditCount()).toBe(before);
  });

  it('is written in the batch of its effect: an entry that cannot be written (a session that is no operator) undoes the effect', async () => {
    const user = await newUser({ balance: 5 });
    const notOperator = await newUser();
    const cookie = await signIn(notOperator.email);
    const actor = operatorActor(sessionCaller(await sha256Hex(cookie)));
    const before = await auditCount();
    await expect(adjustBalance(env.DB, actor, user.id, 500, 'not allowed')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await balanceOf(user)).toBe(5);
    expect(await auditCount()).toBe(before);
  });
});

/** The D1 round trips of one request. */
async function tripsOf(work: () => Promise<unknown>) {
  const trips: RoundTrip[] = [];
  let responded = false;
  const restore = useInvocationOptions(() => ({ record: (trip) => !responded && trips.push(trip), responded: () => (responded = true) }));
  try {
    return { result: await work(), trips };
  } finally {
    restore();
  }
}

describe('disabled accounts', () => {
  let user: TestUser;
  afterEach(async () => {
    if (user) await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { disabled: false } });
  });

  it("stop the user's keys and sessions on the next request (one round trip), refuse sign-in like a wrong password, keep everything", async () => {
    user = await newUser({ balance: 3 });
    const cookie = await signIn(user.email);
    const disabled = await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { disabled: true } });
    expect(disabled.json.data).toMatchObject({ disabled: true, balance: 3 });

    const api = await tripsOf(() => call('/wallet/balance', { key: user.key }));
    expectError(api.result as Awaited<ReturnType<typeof call>>, 401, 'UNAUTHORIZED');
    expect(api.trips.length).toBe(1);
    const page = await tripsOf(() => visit('/dashboard', { cookie }));
    expect((page.result as { status: number }).status).toBe(303);
    expect(page.trips.length).toBe(1);

    const wrong = await visit('/dashboard/sign-in', { form: { email: user.email, password: 'not the password' } });
    const refused = await visit('/dashboard/sign-in', { form: { email: user.email, password: 'correct horse battery' } });
    expect(refused.status).toBe(401);
    expect(refused.setCookie).toBeNull();
    expect(refused.text.replace(user.email, '')).toBe(wrong.text.replace(user.email, ''));

    await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { disabled: false } });
    expect(await balanceOf(user)).toBe(3);
    expect((await visit('/dashboard', { cookie })).status).toBe(200);
  });
});

describe('password reset links', () => {
  const resetLink = async (user: TestUser) => {
    const res = await call(`/admin/users/${user.id}/password-reset`, { admin: true, method: 'POST' });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data.url).toMatch(/^http:\/\/localhost\/dashboard\/reset-password\/[A-Za-z0-9_-]{43}$/);
    return new URL(res.json.data.url).pathname;
  };
  const newPassword = (password: string) => ({ new_password: password, new_password_confirmation: password });

  it('work once: set the password, end every session of the user, 303 to sign-in; then 404', async () => {
    const user = await newUser();
    const cookie = await signIn(user.email);
    const path = await resetLink(user);
    expect((await visit(path)).status).toBe(200);
    const used = await visit(path, { form: newPassword('brand new password') });
    expect(used.status, used.text).toBe(303);
    expect(used.location).toBe('/dashboard/sign-in?done=password_reset');
    expect((await visit(used.location!)).text).toContain('Your new password is set and your other sessions were signed out: sign in with it.');
    expect((await visit('/dashboard', { cookie })).status).toBe(303);
    expect((await visit('/dashboard/sign-in', { form: { email: user.email, password: 'correct horse battery' } })).status).toBe(401);
    await signIn(user.email, 'brand new password');
    expect((await visit(path)).status).toBe(404);
    expect((await visit(path, { form: newPassword('another password') })).status).toBe(404);
    await signIn(user.email, 'brand new password');
  });

  it('refuse a bad password (422, link still usable), an unknown or expired token (404, nothing changes)', async () => {
    const user = await newUser();
    const path = await resetLink(user);
    const mismatch = await visit(path, { form: { new_password: 'long enough 1', new_password_confirmation: 'long enough 2' } });
    expect(mismatch.status).toBe(422);
    expect((await visit(path, { form: newPassword('short') })).status).toBe(422);
    expect((await visit(path)).status).toBe(200);

    expect((await visit(`/dashboard/reset-password/${'A'.repeat(43)}`)).status).toBe(404);
    expect((await visit('/dashboard/reset-password/not-a-token', { form: newPassword('long enough 1') })).status).toBe(404);
    const token = path.split('/').pop()!;
    await env.DB.prepare('UPDATE password_resets SET expires_at = ? WHERE token_hash = ?')
      .bind(new Date(Date.now() - 1000).toISOString(), await sha256Hex(token))
      .run();
    expect((await visit(path)).status).toBe(404);
    expect((await visit(path, { form: newPassword('long enough 1') })).status).toBe(404);
    await signIn(user.email); // the old password still works
  });
});

describe('the admin reads', () => {
  it('list users (exact email, substring), a user with orders count and total spent', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 3 });
    await buy(user, product.id, 2);
    const exact = await call(`/admin/users?email=${encodeURIComponent(user.email.toUpperCase())}`, { admin: true });
    expect(exact.json.data).toEqual([expect.objectContaining({ id: user.id, email: user.email, role: 'user', disabled: false, balance: 6 })]);
    // q is a substring, a whole address included (another user's address may contain it).
    const longer = await newUser();
    const whole = await call(`/admin/users?q=${encodeURIComponent(user.email.toUpperCase())}`, { admin: true });
    expect(whole.json.data.map((u: { id: number }) => u.id)).toContain(user.id);
    expect(whole.json.data.map((u: { id: number }) => u.id)).not.toContain(longer.id);
    const part = await call(`/admin/users?q=${encodeURIComponent(user.email.slice(0, 12))}`, { admin: true });
    expect(part.json.data.map((u: { id: number }) => u.id)).toContain(user.id);
    const detail = await call(`/admin/users/${user.id}`, { admin: true });
    expect(detail.json.data).toMatchObject({ orders_count: 1, total_spent: 4, balance: 6 });
    expectError(await call('/admin/users/999999999', { admin: true }), 404, 'NOT_FOUND');
    // D1 refuses LIKE patterns over 50 bytes: a long search is still an answer (found by the contract fuzz as a 500).
    const long = await call(`/admin/users?q=${encodeURIComponent('%_x'.repeat(80))}`, { admin: true });
    expect(long.status, long.text).toBe(200);
    expect(long.json.data).toEqual([]);
  });

  it('find orders by number or email, an order with items and user, products with units sold, deposits with user and reference', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 4 });
    const order = (await buy(user, product.id, 3)).json.data;
    const byNumber = await call(`/admin/orders?q=${order.order_number.toLowerCase()}`, { admin: true });
    expect(byNumber.json.data).toEqual([expect.objectContaining({ id: order.id, user_id: user.id })]);
    const byEmail = await call(`/admin/orders?q=${encodeURIComponent(user.email)}&status=pending`, { admin: true });
    expect(byEmail.json.data.map((o: { id: number }) => o.id)).toEqual([order.id]);
    const one = await call(`/admin/orders/${order.id}`, { admin: true });
    expect(one.json.data).toMatchObject({ id: order.id, user_id: user.id, stock_items: order.stock_items });
    const products = await call('/admin/products?active=true', { admin: true });
    expect(products.json.data.find((p: { id: number }) => p.id === product.id)).toMatchObject({ stock_count: 1, units_sold: 3 });
    const deposit = await newDeposit(user);
    const deposits = await call(`/admin/deposits?user_id=${user.id}&status=pending`, { admin: true });
    expect(deposits.json.data).toEqual([expect.objectContaining({ id: deposit.deposit_id, user_id: user.id, reference: expect.stringMatching(/^dep_/) })]);
    expectError(await call('/admin/orders?status=lost', { admin: true }), 422, 'VALIDATION_FAILED');
    expectError(await call('/admin/deposits?user_id=0', { admin: true }), 422, 'VALIDATION_FAILED');
  });

  it('sales per UTC day, oldest first, empty days included with zeros', async () => {
    const before = (await call('/admin/stats/sales?days=3', { admin: true })).json.data;
    expect(before.map((d: { date: string }) => d.date)).toEqual(lastDays(3));
    const user = await newUser();
    await fund(user, 7);
    const product = await newProduct({ price: 2.5, stock: 2 });
    const order = (await buy(user, product.id, 2)).json.data;
    await call(`/orders/${order.id}/cancel`, { key: user.key, method: 'POST' });
    const after = (await call('/admin/stats/sales?days=3', { admin: true })).json.data;
    expect(after.slice(0, 2)).toEqual(before.slice(0, 2));
    expect(after[2]).toEqual({
      date: lastDays(1)[0],
      orders: before[2].orders + 1,
      revenue: Math.round((before[2].revenue + 5) * 100) / 100,
      refunds: Math.round((before[2].refunds + 5) * 100) / 100,
      deposits: before[2].deposits,
    });
    const year = (await call('/admin/stats/sales?days=366', { admin: true })).json.data;
    expect(year.length).toBe(366);
    for (const days of ['0', '367', '1.5', 'x']) expectError(await call(`/admin/stats/sales?days=${days}`, { admin: true }), 422, 'VALIDATION_FAILED');
  });
});

describe('searches go through indexes', () => {
  const dialect = new SQLiteAsyncDialect();
  async function plan(query: SQL) {
    const { sql, params } = dialect.sqlToQuery(query);
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...params).all<{ detail: string }>();
    return results.map((r) => r.detail).join('\n');
  }
  const page = { page: 1, per_page: 20 };

  it('a whole email: users_email_unique for users; an orders search walks orders newest first (orders_created), bounded by the page', async () => {
    expect(await plan(usersQuery({ email: 'a@example.com' }, page).reads[0])).toMatch(/USING INDEX users_email_unique/);
    expect(await plan(ordersQuery({ q: 'a@example.com' }, page).reads[0])).toMatch(/SCAN orders USING INDEX orders_created/);
  });

  it('a status: orders_status_created; no filter: orders_created', async () => {
    expect(await plan(ordersQuery({ status: 'pending' }, page).reads[0])).toMatch(/USING INDEX orders_status_created/);
    expect(await plan(ordersQuery({}, page).reads[0])).toMatch(/SCAN orders USING INDEX orders_created/);
  });
});
