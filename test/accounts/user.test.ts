import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { balanceOf, buy, call, expectError, newProduct, newUser, unique, type TestUser } from '../helpers';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PASSWORD = 'correct horse battery'; // set by newUser()

const profileOf = async (user: TestUser) => {
  const res = await call('/user/profile', { key: user.key });
  expect(res.status, res.text).toBe(200);
  return res.json.data;
};

const passwordHashOf = (userId: number) =>
  env.DB.prepare('SELECT password_hash FROM users WHERE id = ?').bind(userId).first<string>('password_hash');

const changePassword = (user: TestUser, current: string, next: string, confirmation = next) =>
  call('/user/password', {
    key: user.key,
    body: { current_password: current, new_password: next, new_password_confirmation: confirmation },
  });

describe('GET /user/profile', () => {
  it('returns {id, name, email, balance, created_at} of the caller', async () => {
    const user = await newUser({ balance: 12.34 });
    const res = await call('/user/profile', { key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    const data = res.json.data;
    expect(Object.keys(data).sort()).toEqual(['balance', 'created_at', 'discount_percent', 'email', 'email_receipts', 'email_verified', 'id', 'name', 'on_hold', 'referred_by']);
    expect(data).toMatchObject({ id: user.id, name: 'Test User', email: user.email, balance: 12.34 });
    expect(data.created_at).toMatch(ISO_UTC);
    expect(res.text).not.toContain('password');
  });
});

describe('PUT /user/profile', () => {
  it('updates name and email: 200 {success, message} and the change is visible', async () => {
    const user = await newUser();
    const email = `${unique('renamed')}@example.com`;
    const res = await call('/user/profile', { key: user.key, method: 'PUT', body: { name: 'New Name', email } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    expect(typeof res.json.message).toBe('string');

    expect(await profileOf(user)).toMatchObject({ id: user.id, name: 'New Name', email });
  });

  it('updates only the fields sent', async () => {
    const user = await newUser();
    const res = await call('/user/profile', { key: user.key, method: 'PUT', body: { name: 'Only Name' } });
    expect(res.status, res.text).toBe(200);
    expect(await profileOf(user)).toMatchObject({ name: 'Only Name', email: user.email });

    const email = `${unique('only-email')}@example.com`;
    expect((await call('/user/profile', { key: user.key, method: 'PUT', body: { email } })).status).toBe(200);
    expect(await profileOf(user)).toMatchObject({ name: 'Only Name', email });
  });

  it.each(['not-an-email', 'a@', '@example.com', 'two words@example.com', ''])(
    'rejects the invalid email %j with 422 errors.email',
    async (email) => {
      const user = await newUser();
      const res = await call('/user/profile', { key: user.key, method: 'PUT', body: { email } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors.email.length).toBeGreaterThan(0);
      expect((await profileOf(user)).email).toBe(user.email);
    },
  );

  it('rejects an email used by another user, case-insensitively, with 422 errors.email', async () => {
    const alice = await newUser();
    const bob = await newUser();
    for (const email of [alice.email, alice.email.toUpperCase()]) {
      const res = await call('/user/profile', { key: bob.key, method: 'PUT', body: { name: 'Bob', email } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors.email.length).toBeGreaterThan(0);
    }
    // nothing was written, not even the name sent alongside
    expect(await profileOf(bob)).toMatchObject({ name: 'Test User', email: bob.email });
    expect((await profileOf(alice)).email).toBe(alice.email);
  });

  it('lets a user keep their own email in another case', async () => {
    const user = await newUser();
    const res = await call('/user/profile', { key: user.key, method: 'PUT', body: { email: user.email.toUpperCase() } });
    expect(res.status, res.text).toBe(200);
  });

  it('rejects a name of 101 characters (100 is fine)', async () => {
    const user = await newUser();
    const res = await call('/user/profile', { key: user.key, method: 'PUT', body: { name: 'n'.repeat(101) } });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors.name.length).toBeGreaterThan(0);
    expect((await profileOf(user)).name).toBe('Test User');

    const ok = await call('/user/profile', { key: user.key, method: 'PUT', body: { name: 'n'.repeat(100) } });
    expect(ok.status, ok.text).toBe(200);
    expect((await profileOf(user)).name).toBe('n'.repeat(100));
  });

  it('rejects an empty name', async () => {
    const user = await newUser();
    const res = await call('/user/profile', { key: user.key, method: 'PUT', body: { name: '' } });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty('name');
  });
});

describe('POST /user/password', () => {
  it('answers 200 with an empty body and stores a new PBKDF2 hash that is now the current password', async () => {
    const user = await newUser();
    const before = await passwordHashOf(user.id);

    const res = await changePassword(user, PASSWORD, 'a brand new secret');
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');

    const after = await passwordHashOf(user.id);
    expect(after).not.toBe(before);
    expect(after!.startsWith('pbkdf2_sha256$')).toBe(true);
    expect(after).not.toContain('a brand new secret');

    // the old password no longer counts as current, the new one does
    const stale = await changePassword(user, PASSWORD, 'yet another secret');
    expectError(stale, 422, 'VALIDATION_FAILED');
    expect(stale.json.errors).toHaveProperty('current_password');
    expect((await changePassword(user, 'a brand new secret', 'yet another secret')).status).toBe(200);
  });

  it('rejects a wrong current_password with 422 errors.current_password and keeps the hash', async () => {
    const user = await newUser();
    const before = await passwordHashOf(user.id);
    const res = await changePassword(user, 'not the password', 'a brand new secret');
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors.current_password.length).toBeGreaterThan(0);
    expect(await passwordHashOf(user.id)).toBe(before);
  });

  it('rejects a confirmation mismatch with 422 errors.new_password and keeps the hash', async () => {
    const user = await newUser();
    const before = await passwordHashOf(user.id);
    const res = await changePassword(user, PASSWORD, 'a brand new secret', 'a brand new secreT');
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors.new_password.length).toBeGreaterThan(0);
    expect(await passwordHashOf(user.id)).toBe(before);
  });

  it('rejects a new_password of 7 characters (8 is fine)', async () => {
    const user = await newUser();
    const before = await passwordHashOf(user.id);
    const res = await changePassword(user, PASSWORD, '1234567');
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors.new_password.length).toBeGreaterThan(0);
    expect(await passwordHashOf(user.id)).toBe(before);

    expect((await changePassword(user, PASSWORD, '12345678')).status).toBe(200);
  });

  it('requires all three fields', async () => {
    const user = await newUser();
    const res = await call('/user/password', { key: user.key, body: {} });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(Object.keys(res.json.errors)).toEqual(expect.arrayContaining(['current_password', 'new_password', 'new_password_confirmation']));
  });
});

describe('GET /user/dashboard', () => {
  it('shows an empty dashboard for a new user', async () => {
    const user = await newUser();
    const res = await call('/user/dashboard', { key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toEqual({
      balance: 0,
      total_orders: 0,
      total_spent: 0,
      pending_orders: 0,
      recent_orders: [],
      recent_transactions: [],
    });
  });

  it('reports balance, order counts, spending and the five newest orders and transactions', async () => {
    const user = await newUser({ balance: 100 });
    const cheap = await newProduct({ price: 1.25, stock: 20 });
    const dear = await newProduct({ price: 3.1, stock: 20 });

    // seven orders: quantity and product vary so every total differs
    const plan: Array<[number, number]> = [
      [cheap.id, 1],
      [dear.id, 2],
      [cheap.id, 3],
      [dear.id, 1],
      [cheap.id, 2],
      [dear.id, 3],
      [cheap.id, 4],
    ];
    const orders: Array<{ id: number; total_amount: number }> = [];
    for (const [productId, quantity] of plan) {
      const res = await buy(user, productId, quantity);
      expect(res.status, res.text).toBe(201);
      orders.push(res.json.data);
    }
    // cancel the fourth order
    const cancelled = orders[3];
    const cancel = await call(`/orders/${cancelled.id}/cancel`, { key: user.key, method: 'POST' });
    expect(cancel.status, cancel.text).toBe(200);

    const toCents = (amount: number) => Math.round(amount * 100);
    const spentCents = orders.filter((o) => o.id !== cancelled.id).reduce((sum, o) => sum + toCents(o.total_amount), 0);

    const res = await call('/user/dashboard', { key: user.key });
    expect(res.status, res.text).toBe(200);
    const d = res.json.data;
    expect(Object.keys(d).sort()).toEqual(['balance', 'pending_orders', 'recent_orders', 'recent_transactions', 'total_orders', 'total_spent']);

    expect(d.total_orders).toBe(7);
    expect(d.pending_orders).toBe(6);
    expect(d.total_spent).toBe(spentCents / 100);
    expect(d.balance).toBe((10_000 - spentCents) / 100);
    expect(d.balance).toBe(await balanceOf(user));

    // five newest orders, newest first, the cancelled one shown as such
    expect(d.recent_orders.map((o: any) => o.id)).toEqual(orders.slice(2).map((o) => o.id).reverse());
    const shownCancelled = d.recent_orders.find((o: any) => o.id === cancelled.id);
    expect(shownCancelled).toMatchObject({ status: 'cancelled', total_amount: cancelled.total_amount, product_name: dear.name });
    for (const o of d.recent_orders) {
      expect(o).toMatchObject({ order_number: expect.any(String), unit_price: expect.any(Number), created_at: expect.stringMatching(ISO_UTC) });
    }

    // ledger: 1 funding + 7 purchases + 1 refund; the five newest are the refund and the last four purchases
    expect(d.recent_transactions).toHaveLength(5);
    expect(d.recent_transactions.map((t: any) => t.type)).toEqual(['refund', 'purchase', 'purchase', 'purchase', 'purchase']);
    expect(d.recent_transactions[0]).toMatchObject({ amount: cancelled.total_amount, balance_after: d.balance });
    expect(d.recent_transactions.slice(1).map((t: any) => t.amount)).toEqual(
      orders.slice(3).map((o) => -o.total_amount).reverse(),
    );
    const txIds = d.recent_transactions.map((t: any) => t.id);
    expect(txIds).toEqual([...txIds].sort((a, b) => b - a));
    const txTimes = d.recent_transactions.map((t: any) => t.created_at);
    expect(txTimes).toEqual([...txTimes].sort().reverse());

    // the same five as the head of the full transaction list
    const list = await call('/wallet/transactions', { key: user.key });
    expect(list.status).toBe(200);
    expect(d.recent_transactions).toEqual(list.json.data.slice(0, 5));
  });

  it("counts only the caller's orders", async () => {
    const user = await newUser({ balance: 10 });
    const other = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 5 });
    expect((await buy(other, product.id, 2)).status).toBe(201);
    expect((await buy(user, product.id, 1)).status).toBe(201);

    const d = (await call('/user/dashboard', { key: user.key })).json.data;
    expect(d).toMatchObject({ total_orders: 1, pending_orders: 1, total_spent: 2, balance: 8 });
    expect(d.recent_orders).toHaveLength(1);
    expect(d.recent_transactions).toHaveLength(2);
  });
});
