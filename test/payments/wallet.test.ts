import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { balanceOf, buy, call, expectError, fund, newProduct, newUser, type TestUser } from '../helpers';

// Wallet: balance, ledger, deposits. Storage is shared between the tests of this file: each test makes its own users.

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MINUTE = 60_000;

const deposit = (user: TestUser, body: unknown) => call('/wallet/deposit', { key: user.key, body });

async function transactionCount(userId: number) {
  const row = await env.DB.prepare('SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ?').bind(userId).first<{ n: number }>();
  return row!.n;
}

describe('GET /wallet/balance', () => {
  it('returns the balance in USD', async () => {
    const user = await newUser({ balance: 12.34 });
    const res = await call('/wallet/balance', { key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ success: true, data: { balance: 12.34, currency: 'USD' } });
  });

  it('is 0 for a new user', async () => {
    const user = await newUser();
    expect((await call('/wallet/balance', { key: user.key })).json.data).toEqual({ balance: 0, currency: 'USD' });
  });

  it('requires an API key', async () => {
    expectError(await call('/wallet/balance'), 401, 'UNAUTHORIZED');
    expectError(await call('/wallet/balance', { key: 'sk_live_0000000000000000000000000000000000000000' }), 401, 'UNAUTHORIZED');
  });
});

describe('GET /wallet/transactions', () => {
  it('lists the ledger newest first with signed amounts and balance_after', async () => {
    const user = await newUser();
    await fund(user, 10);
    await fund(user, 0.5);
    const product = await newProduct({ price: 2.5, stock: 1 });
    expect((await buy(user, product.id, 1)).status).toBe(201);

    const res = await call('/wallet/transactions', { key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.meta).toEqual({ current_page: 1, per_page: 20, total: 3, total_pages: 1 });
    const data = res.json.data;
    expect(data.map((t: { type: string }) => t.type)).toEqual(['purchase', 'adjustment', 'adjustment']);
    expect(data.map((t: { amount: number }) => t.amount)).toEqual([-2.5, 0.5, 10]);
    expect(data.map((t: { balance_after: number }) => t.balance_after)).toEqual([8, 10.5, 10]);
    for (const t of data) {
      expect(Object.keys(t).sort()).toEqual(['amount', 'balance_after', 'created_at', 'description', 'id', 'type']);
      expect(Number.isInteger(t.id)).toBe(true);
      expect(typeof t.description).toBe('string');
      expect(t.created_at).toMatch(ISO_UTC);
    }
    // newest first: created_at descending, ties by id descending
    for (let i = 1; i < data.length; i++) {
      expect(data[i - 1].created_at >= data[i].created_at).toBe(true);
      expect(data[i - 1].id).toBeGreaterThan(data[i].id);
    }
    expect(await balanceOf(user)).toBe(8);
  });

  it('paginates with page and per_page', async () => {
    const user = await newUser();
    for (const amount of [1, 2, 3, 4, 5]) await fund(user, amount);

    const first = await call('/wallet/transactions?per_page=2', { key: user.key });
    expect(first.status, first.text).toBe(200);
    expect(first.json.meta).toEqual({ current_page: 1, per_page: 2, total: 5, total_pages: 3 });
    expect(first.json.data.map((t: { amount: number }) => t.amount)).toEqual([5, 4]);

    const last = await call('/wallet/transactions?per_page=2&page=3', { key: user.key });
    expect(last.json.meta).toEqual({ current_page: 3, per_page: 2, total: 5, total_pages: 3 });
    expect(last.json.data.map((t: { amount: number }) => t.amount)).toEqual([1]);

    const past = await call('/wallet/transactions?per_page=2&page=4', { key: user.key });
    expect(past.status).toBe(200);
    expect(past.json.data).toEqual([]);
    expect(past.json.meta).toEqual({ current_page: 4, per_page: 2, total: 5, total_pages: 3 });

    const max = await call('/wallet/transactions?per_page=100', { key: user.key });
    expect(max.status).toBe(200);
    expect(max.json.meta.per_page).toBe(100);
  });

  it("never shows another user's transactions", async () => {
    const alice = await newUser({ balance: 7 });
    const bob = await newUser({ balance: 3 });
    await fund(bob, 4);

    const res = await call('/wallet/transactions', { key: alice.key });
    expect(res.json.meta.total).toBe(1);
    expect(res.json.data).toHaveLength(1);
    expect(res.json.data[0]).toMatchObject({ amount: 7, balance_after: 7 });

    const { results } = await env.DB.prepare('SELECT id FROM wallet_transactions WHERE user_id = ?').bind(bob.id).all<{ id: number }>();
    const aliceIds = res.json.data.map((t: { id: number }) => t.id);
    for (const row of results) expect(aliceIds).not.toContain(row.id);
  });

  it.each(['per_page=0', 'per_page=101', 'per_page=abc', 'per_page=-1', 'per_page=1.5', 'page=0', 'page=abc', 'page=-2'])(
    'rejects %s with 422',
    async (query) => {
      const user = await newUser();
      const res = await call(`/wallet/transactions?${query}`, { key: user.key });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors).toHaveProperty(query.split('=')[0]);
    },
  );
});

describe('POST /wallet/deposit', () => {
  it('answers 200 with a pending deposit, its payment_url and a 60-minute expiry', async () => {
    const user = await newUser();
    const res = await deposit(user, { amount: 25.5, gateway: 'gateway_one', crypto_currency: 'USDT' });
    const now = Date.now();
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    const data = res.json.data;
    expect(data).toMatchObject({ amount: 25.5, payment_method: 'gateway_one', status: 'pending' });
    expect(Number.isInteger(data.deposit_id)).toBe(true);
    expect(data.payment_url).toBe(`http://localhost/pay/${data.deposit_id}`);
    expect(data.expires_at).toMatch(ISO_UTC);
    expect(Math.abs(Date.parse(data.expires_at) - (now + 60 * MINUTE))).toBeLessThan(MINUTE / 2);

    const row = await env.DB.prepare('SELECT user_id, amount_cents, status, gateway FROM deposits WHERE id = ?')
      .bind(data.deposit_id)
      .first();
    expect(row).toEqual({ user_id: user.id, amount_cents: 2550, status: 'pending', gateway: 'gateway_one' });
  });

  it("normalises gateway 'crypto' to payment_method 'gateway_one'", async () => {
    const user = await newUser();
    const res = await deposit(user, { amount: 10, gateway: 'crypto' });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.payment_method).toBe('gateway_one');
    const status = await call(`/wallet/deposits/${res.json.data.deposit_id}/status`, { key: user.key });
    expect(status.json.data.payment_method).toBe('gateway_one');
  });

  it('defaults crypto_currency to USDT on crypto gateways and keeps a supported choice', async () => {
    const user = await newUser();
    for (const gateway of ['gateway_one', 'crypto', 'gateway_two']) {
      const res = await deposit(user, { amount: 10, gateway });
      expect(res.status, res.text).toBe(200);
      expect(res.json.data.crypto_currency, gateway).toBe('USDT');
    }
    const btc = await deposit(user, { amount: 10, gateway: 'gateway_two', crypto_currency: 'BTC' });
    expect(btc.status, btc.text).toBe(200);
    expect(btc.json.data).toMatchObject({ payment_method: 'gateway_two', crypto_currency: 'BTC' });
  });

  it('has crypto_currency null on gateway_three (not a crypto gateway)', async () => {
    const user = await newUser();
    const res = await deposit(user, { amount: 10, gateway: 'gateway_three' });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.payment_method).toBe('gateway_three');
    expect(res.json.data).toHaveProperty('crypto_currency', null);
  });

  it('rejects an unsupported crypto_currency with 422 errors.crypto_currency', async () => {
    const user = await newUser();
    for (const crypto_currency of ['DOGE', '', 5]) {
      const res = await deposit(user, { amount: 10, gateway: 'gateway_one', crypto_currency });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors).toHaveProperty('crypto_currency');
    }
  });

  it.each([
    ['0.99 (below the minimum)', '{"amount":0.99,"gateway":"gateway_one"}'],
    ['10000.01 (above the maximum)', '{"amount":10000.01,"gateway":"gateway_one"}'],
    ['1.001 (three decimals)', '{"amount":1.001,"gateway":"gateway_one"}'],
    ['"10" (a string)', '{"amount":"10","gateway":"gateway_one"}'],
    ['missing', '{"gateway":"gateway_one"}'],
    ['null', '{"amount":null,"gateway":"gateway_one"}'],
    ['-5 (negative)', '{"amount":-5,"gateway":"gateway_one"}'],
    ['0', '{"amount":0,"gateway":"gateway_one"}'],
  ])('rejects amount %s with 422 VALIDATION_FAILED errors.amount', async (_label, body) => {
    const user = await newUser();
    const res = await deposit(user, body);
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty('amount');
    expect(Array.isArray(res.json.errors.amount)).toBe(true);
    const row = await env.DB.prepare('SELECT count(*) AS n FROM deposits WHERE user_id = ?').bind(user.id).first<{ n: number }>();
    expect(row!.n).toBe(0);
  });

  it.each([
    ['1.00', '{"amount":1.00,"gateway":"gateway_one"}', 1],
    ['10000', '{"amount":10000,"gateway":"gateway_three"}', 10000],
    ['9999.99', '{"amount":9999.99,"gateway":"gateway_two"}', 9999.99],
  ])('accepts amount %s', async (_label, body, amount) => {
    const user = await newUser();
    const res = await deposit(user, body);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.amount).toBe(amount);
  });

  it.each([['paypal'], ['GATEWAY_ONE'], [''], [1]])('rejects gateway %j with 422 errors.gateway', async (gateway) => {
    const user = await newUser();
    const res = await deposit(user, { amount: 10, gateway });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty('gateway');
  });

  it('rejects a missing gateway and malformed JSON with 422', async () => {
    const user = await newUser();
    const missing = await deposit(user, { amount: 10 });
    expectError(missing, 422, 'VALIDATION_FAILED');
    expect(missing.json.errors).toHaveProperty('gateway');
    expectError(await deposit(user, '{"amount": 10,'), 422, 'VALIDATION_FAILED');
  });

  it('does not change the balance or write a transaction', async () => {
    const user = await newUser({ balance: 5 });
    const before = await transactionCount(user.id);
    const res = await deposit(user, { amount: 100, gateway: 'gateway_one' });
    expect(res.status, res.text).toBe(200);
    expect(await balanceOf(user)).toBe(5);
    expect(await transactionCount(user.id)).toBe(before);
  });

  it('requires an API key', async () => {
    expectError(await call('/wallet/deposit', { body: { amount: 10, gateway: 'gateway_one' } }), 401, 'UNAUTHORIZED');
  });
});

describe('GET /wallet/deposits', () => {
  it('lists deposits newest first with their fields, paginated', async () => {
    const user = await newUser();
    const created = [];
    for (const [amount, gateway] of [
      [10, 'gateway_one'],
      [20.25, 'gateway_two'],
      [30, 'gateway_three'],
    ] as const) {
      const res = await deposit(user, { amount, gateway });
      expect(res.status, res.text).toBe(200);
      created.push(res.json.data);
    }

    const res = await call('/wallet/deposits', { key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.meta).toEqual({ current_page: 1, per_page: 20, total: 3, total_pages: 1 });
    expect(res.json.data).toHaveLength(3);
    const newestFirst = [...created].reverse();
    res.json.data.forEach((d: Record<string, unknown>, i: number) => {
      const c = newestFirst[i];
      expect(d).toMatchObject({
        id: c.deposit_id,
        amount: c.amount,
        payment_method: c.payment_method,
        status: 'pending',
        payment_url: c.payment_url,
      });
      expect(d.created_at).toMatch(ISO_UTC);
    });

    const page2 = await call('/wallet/deposits?per_page=2&page=2', { key: user.key });
    expect(page2.status).toBe(200);
    expect(page2.json.meta).toEqual({ current_page: 2, per_page: 2, total: 3, total_pages: 2 });
    expect(page2.json.data.map((d: { id: number }) => d.id)).toEqual([created[0].deposit_id]);
  });

  it("never lists another user's deposits", async () => {
    const alice = await newUser();
    const bob = await newUser();
    const mine = await deposit(alice, { amount: 11, gateway: 'gateway_one' });
    await deposit(bob, { amount: 12, gateway: 'gateway_one' });
    const res = await call('/wallet/deposits', { key: alice.key });
    expect(res.json.meta.total).toBe(1);
    expect(res.json.data.map((d: { id: number }) => d.id)).toEqual([mine.json.data.deposit_id]);
  });

  it('rejects bad pagination with 422', async () => {
    const user = await newUser();
    expectError(await call('/wallet/deposits?per_page=101', { key: user.key }), 422, 'VALIDATION_FAILED');
    expectError(await call('/wallet/deposits?page=0', { key: user.key }), 422, 'VALIDATION_FAILED');
  });
});

describe('GET /wallet/deposits/{id}/status', () => {
  it('returns id, status, amount and payment_method', async () => {
    const user = await newUser();
    const created = (await deposit(user, { amount: 42.1, gateway: 'gateway_two' })).json.data;
    const res = await call(`/wallet/deposits/${created.deposit_id}/status`, { key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toMatchObject({ id: created.deposit_id, status: 'pending', amount: 42.1, payment_method: 'gateway_two' });
  });

  it("answers 404 for another user's deposit", async () => {
    const owner = await newUser();
    const other = await newUser();
    const created = (await deposit(owner, { amount: 10, gateway: 'gateway_one' })).json.data;
    expectError(await call(`/wallet/deposits/${created.deposit_id}/status`, { key: other.key }), 404, 'NOT_FOUND');
  });

  it('answers 404 for an unknown deposit and 422 for a malformed id', async () => {
    const user = await newUser();
    const { max } = (await env.DB.prepare('SELECT coalesce(max(id), 0) AS max FROM deposits').first<{ max: number }>())!;
    expectError(await call(`/wallet/deposits/${max + 1000}/status`, { key: user.key }), 404, 'NOT_FOUND');
    expectError(await call('/wallet/deposits/abc/status', { key: user.key }), 422, 'VALIDATION_FAILED');
  });

  it("reads a pending deposit past its expires_at as 'expired', and leaves the wallet alone", async () => {
    const user = await newUser({ balance: 3 });
    const overdue = (await deposit(user, { amount: 10, gateway: 'gateway_one' })).json.data;
    const fresh = (await deposit(user, { amount: 20, gateway: 'gateway_one' })).json.data;
    await env.DB.prepare('UPDATE deposits SET expires_at = ? WHERE id = ?')
      .bind(new Date(Date.now() - MINUTE).toISOString(), overdue.deposit_id)
      .run();

    const status = await call(`/wallet/deposits/${overdue.deposit_id}/status`, { key: user.key });
    expect(status.status, status.text).toBe(200);
    expect(status.json.data.status).toBe('expired');
    expect((await call(`/wallet/deposits/${fresh.deposit_id}/status`, { key: user.key })).json.data.status).toBe('pending');

    const list = await call('/wallet/deposits', { key: user.key });
    const byId = new Map(list.json.data.map((d: { id: number; status: string }) => [d.id, d.status]));
    expect(byId.get(overdue.deposit_id)).toBe('expired');
    expect(byId.get(fresh.deposit_id)).toBe('pending');
    expect(await balanceOf(user)).toBe(3);
  });
});
