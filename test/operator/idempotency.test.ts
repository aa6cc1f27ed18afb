import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { addStock } from '../../src/services/catalogue/products';
import { createCheckedApp } from '../contract';
import { faultyD1, type BatchFault } from '../faults';
import { ADMIN_TOKEN_ACTOR } from '../../src/services/accounts/audit-log';
import { ADMIN_TOKEN, balanceOf, call, expectError, newDeposit, newProduct, newUser, unique } from '../helpers';

// Idempotency-Key on every admin POST/PATCH: one effect, the first response replayed byte for byte, 422 for the
// same key with another request, in the operator's own key namespace. Each test makes its own data and keys.

const newKey = () => `op-${crypto.randomUUID()}`;

interface AdminRequest {
  path: string;
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

const send = ({ path, method = 'POST', body, headers = {} }: AdminRequest, key?: string) =>
  call(path, { admin: true, method, body, headers: { ...headers, ...(key === undefined ? {} : { 'Idempotency-Key': key }) } });

const count = async (query: string, ...params: unknown[]) =>
  (await env.DB.prepare(query).bind(...params).first<{ n: number }>())!.n;

interface RouteCase {
  /** The first request, another request (same route or not) to reuse its key with, and what counts its effect. */
  first: AdminRequest;
  other: AdminRequest;
  effects: () => Promise<number>;
}

const routes: Array<[string, () => Promise<RouteCase>]> = [
  [
    'POST /admin/users',
    async () => {
      const email = `${unique('op-user')}@example.com`;
      return {
        first: { path: '/admin/users', body: { name: 'Grace', email, password: 'a-long-password' } },
        other: { path: '/admin/users', body: { name: 'Grace', email, password: 'another-password' } },
        effects: () => count('SELECT count(*) AS n FROM users WHERE email = ?', email),
      };
    },
  ],
  [
    'POST /admin/users/{id}/balance-adjustments',
    async () => {
      const user = await newUser();
      const path = `/admin/users/${user.id}/balance-adjustments`;
      return {
        first: { path, body: { amount: 12.5, description: 'goodwill' } },
        other: { path, body: { amount: 12.51, description: 'goodwill' } },
        effects: () => count('SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ?', user.id),
      };
    },
  ],
  [
    'POST /admin/products',
    async () => {
      const sku = unique('OP-SKU');
      return {
        first: { path: '/admin/products', body: { name: 'Voucher', sku, price: 3 } },
        other: { path: '/admin/products', body: { name: 'Voucher', sku: `${sku}-b`, price: 3 } },
        effects: () => count('SELECT count(*) AS n FROM products WHERE sku LIKE ?', `${sku}%`),
      };
    },
  ],
  [
    'PATCH /admin/products/{id}',
    async () => {
      const product = await newProduct({ price: 2 });
      const path = `/admin/products/${product.id}`;
      // A PATCH writes updated_at each time it applies: one distinct value per applied request.
      const seen = new Set<string>();
      return {
        first: { path, method: 'PATCH', body: { price: 2.5 } },
        other: { path, method: 'PATCH', body: { price: 2.75 } },
        effects: async () => {
          const row = await env.DB.prepare('SELECT updated_at, created_at FROM products WHERE id = ?').bind(product.id).first<{ updated_at: string; created_at: string }>();
          if (row!.updated_at !== row!.created_at) seen.add(row!.updated_at);
          return seen.size;
        },
      };
    },
  ],
  [
    'POST /admin/products/{id}/stock',
    async () => {
      const product = await newProduct();
      const path = `/admin/products/${product.id}/stock`;
      return {
        first: { path, body: { items: ['OP-A', 'OP-B'] } },
        other: { path, body: { items: ['OP-A', 'OP-C'] } },
        effects: () => count('SELECT count(*) AS n FROM stock_uploads WHERE product_id = ?', product.id),
      };
    },
  ],
  [
    'PATCH /admin/users/{id}',
    async () => {
      const user = await newUser();
      const path = `/admin/users/${user.id}`;
      const seen = new Set<string>();
      return {
        first: { path, method: 'PATCH', body: { name: 'Renamed once' } },
        other: { path, method: 'PATCH', body: { name: 'Renamed twice' } },
        effects: async () => {
          const row = await env.DB.prepare('SELECT updated_at, created_at FROM users WHERE id = ?').bind(user.id).first<{ updated_at: string; created_at: string }>();
          if (row!.updated_at !== row!.created_at) seen.add(row!.updated_at);
          return seen.size;
        },
      };
    },
  ],
  [
    'POST /admin/users/{id}/password-reset',
    async () => {
      const [user, another] = [await newUser(), await newUser()];
      return {
        first: { path: `/admin/users/${user.id}/password-reset` },
        other: { path: `/admin/users/${another.id}/password-reset` },
        effects: () => count('SELECT count(*) AS n FROM password_resets WHERE user_id = ?', user.id),
      };
    },
  ],
  [
    'POST /admin/deposits/{id}/mark-paid',
    async () => {
      const user = await newUser();
      const [deposit, another] = [await newDeposit(user, { amount: 7 }), await newDeposit(user, { amount: 8 })];
      return {
        first: { path: `/admin/deposits/${deposit.deposit_id}/mark-paid` },
        other: { path: `/admin/deposits/${another.deposit_id}/mark-paid` },
        effects: () => count("SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ? AND type = 'deposit'", user.id),
      };
    },
  ],
];

describe('Idempotency-Key on admin routes', () => {
  it.each(routes)('%s: one effect, the first response replayed byte for byte, 422 with another request', async (_route, make) => {
    const { first, other, effects } = await make();
    const key = newKey();
    const before = await effects();
    const original = await send(first, key);
    expect(original.status, original.text).toBeLessThan(300);
    expect(original.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await effects()).toBe(before + 1);

    const replay = await send(first, key);
    expect(replay.status).toBe(original.status);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.text).toBe(original.text);
    expect(await effects()).toBe(before + 1);

    expectError(await send(other, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await effects()).toBe(before + 1);
    // The key's record is the operator's, not any user's.
    expect(await count('SELECT count(*) AS n FROM operator_idempotency_keys WHERE idempotency_key = ?', key)).toBe(1);
    expect(await count('SELECT count(*) AS n FROM idempotency_keys WHERE idempotency_key = ?', key)).toBe(0);
  });

  it('a retried balance adjustment applies once, however many retries arrive at once', async () => {
    const user = await newUser();
    const key = newKey();
    const adjustment = { path: `/admin/users/${user.id}/balance-adjustments`, body: { amount: 25, description: 'retried credit' } };
    const results = await Promise.all(Array.from({ length: 8 }, () => send(adjustment, key)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(results.filter((r) => r.headers.get('Idempotent-Replayed') === null)).toHaveLength(1);
    expect(await balanceOf(user)).toBe(25);
    expect(await count('SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ?', user.id)).toBe(1);
  });

  it('remembers a refused adjustment not at all: the same key works once the balance allows it', async () => {
    const user = await newUser();
    const key = newKey();
    const debit = { path: `/admin/users/${user.id}/balance-adjustments`, body: { amount: -5, description: 'debit' } };
    expectError(await send(debit, key), 400, 'INSUFFICIENT_BALANCE');
    expect(await count('SELECT count(*) AS n FROM operator_idempotency_keys WHERE idempotency_key = ?', key)).toBe(0);
    await send({ path: `/admin/users/${user.id}/balance-adjustments`, body: { amount: 5, description: 'funding' } });
    const retried = await send(debit, key);
    expect(retried.status, retried.text).toBe(201);
    expect(retried.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await balanceOf(user)).toBe(0);
  });

  it("keeps the operator's keys apart from every user's", async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 3 });
    const key = newKey();
    const order = await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 }, headers: { 'Idempotency-Key': key } });
    expect(order.status, order.text).toBe(201);
    const credit = await send({ path: `/admin/users/${user.id}/balance-adjustments`, body: { amount: 1, description: 'same key' } }, key);
    expect(credit.status, credit.text).toBe(201);
    expect(credit.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await balanceOf(user)).toBe(5);
  });

  it('forgets operator keys after 24 hours: reuse then applies again, and the job deletes old records', async () => {
    const user = await newUser();
    const key = newKey();
    const credit = { path: `/admin/users/${user.id}/balance-adjustments`, body: { amount: 1, description: 'daily' } };
    await send(credit, key);
    const dayAgo = new Date(Date.now() - 24 * 3_600_000 - 1000).toISOString();
    const age = () => env.DB.prepare('UPDATE operator_idempotency_keys SET created_at = ? WHERE idempotency_key = ?').bind(dayAgo, key).run();
    await age();
    const again = await send(credit, key);
    expect(again.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await balanceOf(user)).toBe(2);
    await age();
    await runScheduledJobs(env);
    expect(await count('SELECT count(*) AS n FROM operator_idempotency_keys WHERE idempotency_key = ?', key)).toBe(0);
  });

  it('replays a stock upload sent as text with the same items as its JSON form', async () => {
    const product = await newProduct();
    const key = newKey();
    const json = await send({ path: `/admin/products/${product.id}/stock`, body: { items: ['T-1', 'T-2'] } }, key);
    const text = await send({ path: `/admin/products/${product.id}/stock`, body: 'T-1\nT-2\n', headers: { 'Content-Type': 'text/plain' } }, key);
    expect(text.headers.get('Idempotent-Replayed')).toBe('true');
    expect(text.text).toBe(json.text);
  });
});

describe('a user created under an Idempotency-Key', () => {
  it('replays the same first API key, which the database holds only sealed', async () => {
    const key = newKey();
    const request = { path: '/admin/users', body: { name: 'Sealed', email: `${unique('sealed')}@example.com`, password: 'correct horse battery' } };
    const first = await send(request, key);
    expect(first.status, first.text).toBe(201);
    const replay = await send(request, key);
    expect(replay.text).toBe(first.text);
    const apiKey = first.json.data.api_key as string;
    expect((await call('/wallet/balance', { key: apiKey })).status).toBe(200);

    const record = await env.DB.prepare('SELECT request_hash, response_snapshot FROM operator_idempotency_keys WHERE idempotency_key = ?')
      .bind(key)
      .first<{ request_hash: string; response_snapshot: string }>();
    const stored = JSON.stringify(record);
    expect(stored).not.toContain(apiKey);
    expect(stored).not.toContain(apiKey.slice(8));
    expect(stored).not.toContain('correct horse battery');
    expect(JSON.parse(record!.response_snapshot)).toMatchObject({ id: first.json.data.id, sealedApiKey: expect.any(String) });
  });

  it('is another request under another admin token (the password enters the request hash by an HMAC under it): 422, nothing created', async () => {
    const key = newKey();
    const body = { name: 'Rotated', email: `${unique('rotated')}@example.com`, password: 'a-long-password' };
    expect((await send({ path: '/admin/users', body }, key)).status).toBe(201);
    const app = createCheckedApp();
    const res = await app.request(
      '/api/v2/admin/users',
      { method: 'POST', headers: { Authorization: 'Bearer rotated-token', 'Idempotency-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) },
      { ...env, ADMIN_TOKEN: 'rotated-token' },
    );
    expect(res.status).toBe(422);
    expect(res.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await res.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await count('SELECT count(*) AS n FROM users WHERE email = ?', body.email)).toBe(1);
  });
});

describe('admin writes whose outcome a database fault hid', () => {
  const app = createCheckedApp();

  async function sendThrough(fault: BatchFault, { path, body }: AdminRequest, key?: string) {
    const d1 = faultyD1(env.DB, fault);
    const headers: Record<string, string> = { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' };
    if (key !== undefined) headers['Idempotency-Key'] = key;
    const res = await app.request(`/api/v2${path}`, { method: 'POST', headers, body: JSON.stringify(body) }, { ...env, DB: d1.db });
    expect(d1.fired()).toBe(true);
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text) };
  }

  it('an adjustment that committed before the connection dropped is answered once, and its retry replays it', async () => {
    const user = await newUser();
    const key = newKey();
    const adjustment = { path: `/admin/users/${user.id}/balance-adjustments`, body: { amount: 9.99, description: 'lost ack' } };
    const first = await sendThrough('lost-after-commit', adjustment, key);
    expect(first.status, first.text).toBe(201);
    expect(first.json.data).toMatchObject({ amount: 9.99, balance_after: 9.99 });
    const retry = await send(adjustment, key);
    expect(retry.headers.get('Idempotent-Replayed')).toBe('true');
    expect(retry.text).toBe(first.text);
    expect(await balanceOf(user)).toBe(9.99);
  });

  it.each<BatchFault>(['lost-after-commit', 'overloaded-before-run'])('a restock hit by %s reports its own added and skipped counts', async (fault) => {
    const product = await newProduct();
    expect((await send({ path: `/admin/products/${product.id}/stock`, body: { items: ['F-A', 'F-B'] } })).json.data).toMatchObject({ added: 2 });
    const res = await sendThrough(fault, { path: `/admin/products/${product.id}/stock`, body: { items: ['F-B', 'F-C', 'F-D', 'F-C'] } });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data).toEqual({ added: 2, skipped: 2, stock_count: 4 });
    expect(await count("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'", product.id)).toBe(4);
  });

  it('the service settles a committed upload from its own row, not from what a re-run would find', async () => {
    const product = await newProduct();
    const d1 = faultyD1(env.DB, 'lost-after-commit');
    const upload = await addStock(d1.db, ADMIN_TOKEN_ACTOR, product.id, ['S-1', 'S-2', 'S-3'], { origin: 'http://localhost' });
    expect(d1.fired()).toBe(true);
    expect(upload).toMatchObject({ added: 3, skipped: 0, stockCount: 3 });
  });
});
