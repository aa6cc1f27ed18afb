import { env } from 'cloudflare:test';
import { SELF } from '../contract';
import { describe, expect, it } from 'vitest';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { BASE, balanceOf, call, expectError, fund, newProduct, newUser, type TestUser } from '../helpers';

async function post(user: TestUser, path: string, body: unknown, key?: string) {
  const headers: Record<string, string> = { 'X-API-Key': user.key, 'Content-Type': 'application/json' };
  if (key !== undefined) headers['Idempotency-Key'] = key;
  const res = await SELF.fetch(`${BASE}${path}`, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
}

const countOrders = async (userId: number) =>
  (await env.DB.prepare('SELECT count(*) AS n FROM orders WHERE user_id = ?').bind(userId).first<{ n: number }>())!.n;

const newKey = () => `key-${crypto.randomUUID()}`;

describe('Idempotency-Key on POST /orders', () => {
  it('replays the first response byte for byte and buys once', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 5 });
    const key = newKey();
    const first = await post(user, '/orders', { product_id: product.id, quantity: 2 }, key);
    const second = await post(user, '/orders', { quantity: 2, product_id: product.id }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('Idempotent-Replayed')).toBeNull();
    expect(second.status).toBe(201);
    expect(second.headers.get('Idempotent-Replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(await countOrders(user.id)).toBe(1);
    expect(await balanceOf(user)).toBe(6);
  });

  it('keeps replaying the original response after the order changed', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 2 });
    const key = newKey();
    const first = await post(user, '/orders', { product_id: product.id, quantity: 1 }, key);
    await post(user, `/orders/${first.json.data.id}/cancel`, undefined);
    const replay = await post(user, '/orders', { product_id: product.id, quantity: 1 }, key);
    expect(replay.text).toBe(first.text);
    expect(replay.json.data.status).toBe('pending');
  });

  it('rejects the same key with a different request, changing nothing', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 5 });
    const key = newKey();
    await post(user, '/orders', { product_id: product.id, quantity: 1 }, key);
    const reused = await post(user, '/orders', { product_id: product.id, quantity: 2 }, key);
    expectError(reused, 422, 'IDEMPOTENCY_KEY_REUSED');
    const otherEndpoint = await post(user, '/wallet/deposit', { amount: 10, gateway: 'gateway_one' }, key);
    expectError(otherEndpoint, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await countOrders(user.id)).toBe(1);
    expect(await balanceOf(user)).toBe(9);
  });

  it('scopes keys per user', async () => {
    const product = await newProduct({ price: 1, stock: 5 });
    const [alice, bob] = await Promise.all([newUser({ balance: 5 }), newUser({ balance: 5 })]);
    const key = newKey();
    const a = await post(alice, '/orders', { product_id: product.id, quantity: 1 }, key);
    const b = await post(bob, '/orders', { product_id: product.id, quantity: 1 }, key);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get('Idempotent-Replayed')).toBeNull();
    expect(a.json.data.id).not.toBe(b.json.data.id);
  });

  it('ten concurrent first requests with one key produce one order and one response', async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 1, stock: 50 });
    const key = newKey();
    const results = await Promise.all(Array.from({ length: 10 }, () => post(user, '/orders', { product_id: product.id, quantity: 3 }, key)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(results.filter((r) => r.headers.get('Idempotent-Replayed') === null)).toHaveLength(1);
    expect(await countOrders(user.id)).toBe(1);
    expect(await balanceOf(user)).toBe(97);
  });

  it('concurrent same-key purchases of the last item all answer the first response, never the loser\'s 400', async () => {
    // The losers may find the stock gone before they see the key's record: they must still replay the winner.
    for (let round = 0; round < 8; round++) {
      const user = await newUser({ balance: 10 });
      const product = await newProduct({ price: 1, stock: 1 });
      const key = newKey();
      const results = await Promise.all(Array.from({ length: 5 }, () => post(user, '/orders', { product_id: product.id, quantity: 1 }, key)));
      expect(results.map((r) => r.status)).toEqual(Array(5).fill(201));
      expect(new Set(results.map((r) => r.text)).size).toBe(1);
      expect(await countOrders(user.id)).toBe(1);
    }
  });

  it('remembers nothing for a failed request: the same key may be retried', async () => {
    const user = await newUser({ balance: 1 });
    const product = await newProduct({ price: 2, stock: 5 });
    const key = newKey();
    expectError(await post(user, '/orders', { product_id: product.id, quantity: 1 }, key), 400, 'INSUFFICIENT_BALANCE');
    const records = await env.DB.prepare('SELECT count(*) AS n FROM idempotency_keys WHERE user_id = ?').bind(user.id).first<{ n: number }>();
    expect(records!.n).toBe(0);
    await fund(user, 5);
    const retry = await post(user, '/orders', { product_id: product.id, quantity: 1 }, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('Idempotent-Replayed')).toBeNull();
  });

  it('writes the key record in the batch of the effect: the order as it was, nothing written after', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 5 });
    const key = newKey();
    const res = await post(user, '/orders', { product_id: product.id, quantity: 1 }, key);
    const record = await env.DB.prepare(
      'SELECT resource_id, response_body, response_snapshot FROM idempotency_keys WHERE user_id = ? AND idempotency_key = ?',
    )
      .bind(user.id, key)
      .first<{ resource_id: number; response_body: string | null; response_snapshot: string }>();
    expect(record).toMatchObject({ resource_id: res.json.data.id, response_body: null });
    expect(JSON.parse(record!.response_snapshot)).toMatchObject({ id: res.json.data.id, orderNumber: res.json.data.order_number, status: 'pending' });
  });

  it('replays the first outcome byte for byte even after the order changed', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 5 });
    const key = newKey();
    const first = await post(user, '/orders', { product_id: product.id, quantity: 2 }, key);
    expect((await post(user, `/orders/${first.json.data.id}/cancel`, undefined)).status).toBe(200);
    const replay = await post(user, '/orders', { product_id: product.id, quantity: 2 }, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(await countOrders(user.id)).toBe(1);
  });

  it('forgets keys after 24 hours: reuse then performs a new effect, and the job deletes old records', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 5 });
    const key = newKey();
    await post(user, '/orders', { product_id: product.id, quantity: 1 }, key);
    const dayAgo = new Date(Date.now() - 24 * 3_600_000 - 1000).toISOString();
    await env.DB.prepare('UPDATE idempotency_keys SET created_at = ? WHERE user_id = ?').bind(dayAgo, user.id).run();
    const again = await post(user, '/orders', { product_id: product.id, quantity: 1 }, key);
    expect(again.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await countOrders(user.id)).toBe(2);

    await env.DB.prepare('UPDATE idempotency_keys SET created_at = ? WHERE user_id = ?').bind(dayAgo, user.id).run();
    const report = await runScheduledJobs(env);
    expect(report.deletedIdempotencyKeys).toBeGreaterThanOrEqual(1);
    const left = await env.DB.prepare('SELECT count(*) AS n FROM idempotency_keys WHERE user_id = ?').bind(user.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it('rejects malformed keys with 422', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 5 });
    for (const bad of ['', 'x'.repeat(256), 'tab\there']) {
      const res = await post(user, '/orders', { product_id: product.id, quantity: 1 }, bad);
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors['Idempotency-Key']).toBeDefined();
    }
    expect(await countOrders(user.id)).toBe(0);
  });
});

describe('Idempotency-Key on cancel and deposit', () => {
  it('replays a cancel and refunds once', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 2, stock: 5 });
    const order = await post(user, '/orders', { product_id: product.id, quantity: 1 });
    const key = newKey();
    const first = await post(user, `/orders/${order.json.data.id}/cancel`, undefined, key);
    const replay = await post(user, `/orders/${order.json.data.id}/cancel`, undefined, key);
    expect(first.status).toBe(200);
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(await balanceOf(user)).toBe(5);
    const other = await post(user, `/orders/${order.json.data.id}/cancel`, undefined, newKey());
    expectError(other, 400, 'ORDER_NOT_CANCELLABLE');
  });

  it('replays a deposit creation and creates one deposit', async () => {
    const user = await newUser();
    const key = newKey();
    const body = { amount: 20, gateway: 'crypto' };
    const results = await Promise.all(Array.from({ length: 5 }, () => post(user, '/wallet/deposit', body, key)));
    expect(results.map((r) => r.status)).toEqual(Array(5).fill(200));
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    const list = await call('/wallet/deposits', { key: user.key });
    expect(list.json.meta.total).toBe(1);
    expect(results[0].json.data.payment_url).toMatch(/\/pay\/\d+$/);
  });
});
