import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { call, newProduct, newUser, unique } from '../helpers';
import { D1_LIMITS, productionD1 } from '../production-d1';

// Production D1's limits, which the local emulator ignores, are enforced by the wrapper every test runs on
// (test/production-d1.ts). These tests make sure the wrapper bites, and that the work that comes closest stays under.

const bigItems = (count: number, length: number) => Array.from({ length: count }, (_, i) => `${unique('I')}-${i}-`.padEnd(length, 'x'));

describe('D1 limits', () => {
  it('the wrapper refuses what production D1 refuses', async () => {
    const db = productionD1(env.DB);
    const params = Array.from({ length: D1_LIMITS.boundParameters + 1 }, (_, i) => i);
    await expect(db.prepare(`SELECT ${params.map(() => '?').join(', ')}`).bind(...params).all()).rejects.toThrow(/too many SQL variables/);
    await expect(db.prepare('SELECT ?').bind('x'.repeat(D1_LIMITS.valueBytes + 1)).all()).rejects.toThrow(/too big/);
    await expect(db.prepare(`SELECT '${'x'.repeat(D1_LIMITS.sqlBytes)}'`).all()).rejects.toThrow(/too long/);
    const statements = Array.from({ length: D1_LIMITS.queriesPerInvocation + 1 }, () => db.prepare('SELECT 1'));
    await expect(db.batch(statements)).rejects.toThrow(/Too many API requests/);
  });

  it('a 3,000-item upload of 4,000-character items (12 MB) is added whole, under 2 MB per bound value', async () => {
    const product = await newProduct({ price: 1 });
    const items = bigItems(3_000, 4_000);
    const res = await call(`/admin/products/${product.id}/stock`, { admin: true, body: { items } });
    expect(res.status, res.text.slice(0, 300)).toBe(201);
    expect(res.json.data).toMatchObject({ added: 3_000, skipped: 0, stock_count: 3_000 });
  });

  it('an idempotent purchase of 1,000 items of 4,096 characters (4 MB) replays from a record far under 2 MB', async () => {
    const user = await newUser({ balance: 1_000 });
    const product = await newProduct({ price: 0.5 });
    expect((await call(`/admin/products/${product.id}/stock`, { admin: true, body: { items: bigItems(1_000, 4_096) } })).status).toBe(201);
    const options = { key: user.key, body: { product_id: product.id, quantity: 1_000 }, headers: { 'Idempotency-Key': unique('big') } };
    const first = await call('/orders', options);
    expect(first.status).toBe(201);
    expect(first.text.length).toBeGreaterThan(4_000_000);
    const replay = await call('/orders', options);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    const record = await env.DB.prepare('SELECT max(length(response_snapshot)) AS bytes FROM idempotency_keys WHERE user_id = ?').bind(user.id).first<{ bytes: number }>();
    expect(record!.bytes).toBeLessThan(10_000);
  });
});
