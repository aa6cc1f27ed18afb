import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { idempotencyKeyIn, signedInUser, visit } from '../dashboard-helpers';
import { balanceOf, call, expectError, newProduct, newUser, type TestUser } from '../helpers';

// Key families: a key made with an API key is its child; its purchases count against the limit of every key above it
// (revoked children included), and it dies with its maker, at once, however deep.

interface Made {
  id: number;
  key: string;
}

async function makeKey(maker: string, body: Record<string, unknown> = {}): Promise<Made> {
  const res = await call('/api-keys', { key: maker, body: { name: 'child', ...body } });
  expect(res.status, res.text).toBe(201);
  return { id: res.json.data.id, key: res.json.data.key };
}

const buyWith = (key: string, productId: number, quantity = 1) => call('/orders', { key, body: { product_id: productId, quantity } });
const revoke = (key: string, id: number) => call(`/api-keys/${id}`, { key, method: 'DELETE' });
const listed = async (key: string) => ((await call('/api-keys', { key })).json.data as Array<{ id: number }>).map((k) => k.id).sort();
const tomorrow = (now = new Date()) => `${new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString()}`;

async function idOf(user: TestUser, key: string): Promise<number> {
  const row = await env.DB.prepare('SELECT id FROM api_keys WHERE user_id = ? AND key_preview = ?').bind(user.id, `sk_live_****${key.slice(-4)}`).first<{ id: number }>();
  return row!.id;
}

describe('created_by_key_id', () => {
  it('a key made with a key names its maker, in the answer and in the list; dashboard and operator keys name none', async () => {
    const user = await signedInUser({ balance: 0 });
    const parent = await makeKey(user.key, { name: 'parent' });
    const created = await call('/api-keys', { key: parent.key, body: { name: 'grandchild' } });
    expect(created.json.data.created_by_key_id).toBe(parent.id);
    const list = (await call('/api-keys', { key: user.key })).json.data as Array<{ id: number; name: string; created_by_key_id: number | null }>;
    const rootId = await idOf(user, user.key);
    expect(Object.fromEntries(list.map((k) => [k.id, k.created_by_key_id]))).toEqual({
      [rootId]: null,
      [parent.id]: rootId,
      [created.json.data.id]: parent.id,
    });
    // A key made in the dashboard has no maker.
    const page = await visit('/dashboard/keys', { cookie: user.cookie });
    const idempotency_key = idempotencyKeyIn(page.text);
    const made = await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'from the dashboard', idempotency_key } });
    expect(made.status, made.text).toBeLessThan(400);
    const dash = await env.DB.prepare("SELECT created_by_key_id, ancestry FROM api_keys WHERE user_id = ? AND name = 'from the dashboard'").bind(user.id).first();
    expect(dash).toEqual({ created_by_key_id: null, ancestry: '/' });
  });
});

describe('a child never outlives its maker', () => {
  it('revoking a key: its child and grandchild answer 401 on the very next request and leave the list; a sibling family stays', async () => {
    const user = await newUser();
    const parent = await makeKey(user.key);
    const child = await makeKey(parent.key);
    const grandchild = await makeKey(child.key);
    const other = await makeKey(user.key);
    for (const k of [parent, child, grandchild, other]) expect((await call('/wallet/balance', { key: k.key })).status).toBe(200);

    expect((await revoke(user.key, parent.id)).status).toBe(200);
    for (const k of [parent, child, grandchild]) expectError(await call('/wallet/balance', { key: k.key }), 401, 'UNAUTHORIZED');
    expect((await call('/wallet/balance', { key: other.key })).status).toBe(200);
    expect(await listed(user.key)).toEqual([await idOf(user, user.key), other.id].sort());
    // Already revoked with its maker: 404, as any revoked key.
    expectError(await revoke(user.key, child.id), 404, 'NOT_FOUND');
  });

  it('a key revoking its own maker revokes itself, its siblings and their children too', async () => {
    const user = await newUser();
    const parent = await makeKey(user.key);
    const child = await makeKey(parent.key);
    const sibling = await makeKey(parent.key);
    const nephew = await makeKey(sibling.key);
    expect((await revoke(child.key, parent.id)).status).toBe(200);
    for (const k of [parent, child, sibling, nephew]) expectError(await call('/wallet/balance', { key: k.key }), 401, 'UNAUTHORIZED');
    expect(await listed(user.key)).toEqual([await idOf(user, user.key)]);
  });

  it('the dashboard revoking a key revokes its family', async () => {
    const user = await signedInUser();
    const parent = await makeKey(user.key);
    const child = await makeKey(parent.key);
    const res = await visit(`/dashboard/keys/${parent.id}/revoke`, { cookie: user.cookie, form: {} });
    expect(res.status, res.text).toBe(303);
    expectError(await call('/wallet/balance', { key: child.key }), 401, 'UNAUTHORIZED');
  });

  it('when a key expires, its children answer 401 (their expiry is never later) and leave the list; revoking it revokes them', async () => {
    const user = await newUser();
    const parent = await makeKey(user.key, { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    const child = await makeKey(parent.key);
    const grandchild = await makeKey(child.key);
    expect(await listed(user.key)).toHaveLength(4);
    await env.DB.prepare('UPDATE api_keys SET expires_at = ? WHERE id = ?').bind(new Date(Date.now() - 1000).toISOString(), parent.id).run();
    expectError(await call('/wallet/balance', { key: parent.key }), 401, 'UNAUTHORIZED');
    // Their own expiry says so too; the list hides them even when a child's own expiry were later.
    await env.DB.prepare('UPDATE api_keys SET expires_at = NULL WHERE id IN (?, ?)').bind(child.id, grandchild.id).run();
    expect(await listed(user.key)).toEqual([await idOf(user, user.key), parent.id].sort());
    // Hidden keys still count towards the five (so the database never holds more than five unrevoked keys of a user)
    // until their expired maker, which is listed, is revoked: then they go with it.
    await makeKey(user.key);
    expectError(await call('/api-keys', { key: user.key, body: { name: 'sixth' } }), 400, 'API_KEY_LIMIT_REACHED');
    expect((await revoke(user.key, parent.id)).status).toBe(200);
    for (let i = 0; i < 3; i++) await makeKey(user.key);
    expect(await listed(user.key)).toHaveLength(5);
    const revoked = await env.DB.prepare('SELECT count(*) AS n FROM api_keys WHERE id IN (?, ?, ?) AND revoked_at IS NOT NULL').bind(parent.id, child.id, grandchild.id).first<{ n: number }>();
    expect(revoked!.n).toBe(3);
  });
});

describe('the daily spend limit covers the family', () => {
  it('a child, a grandchild and a revoked child all count against the parent: SPEND_LIMIT_REACHED names the parent', async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 2, stock: 20 });
    const parent = await makeKey(user.key, { spend_limit_per_day: 10 });
    const child = await makeKey(parent.key, { spend_limit_per_day: 8 });
    const grandchild = await makeKey(child.key);
    expect((await buyWith(parent.key, product.id)).status).toBe(201); // parent family 2
    expect((await buyWith(child.key, product.id)).status).toBe(201); // 4 (child family 2)
    expect((await buyWith(grandchild.key, product.id)).status).toBe(201); // 6 (child family 4)
    // The spend-make-revoke loop: a fresh child spends, is revoked, and still counts.
    const spent = await makeKey(parent.key);
    expect((await buyWith(spent.key, product.id, 2)).status).toBe(201); // 10
    expect((await revoke(parent.key, spent.id)).status).toBe(200);
    const next = await makeKey(parent.key);
    const refused = await buyWith(next.key, product.id);
    expectError(refused, 403, 'SPEND_LIMIT_REACHED');
    expect(refused.json.errors).toEqual({ limit: 10, spent_today: 10, total: 2, resets_at: tomorrow(), key_id: parent.id });
    expect(refused.json.error).toContain('$0.00 is left today');
    expectError(await buyWith(grandchild.key, product.id), 403, 'SPEND_LIMIT_REACHED');
    expect(await balanceOf(user)).toBe(90);
    const spentToday = Object.fromEntries(((await call('/api-keys', { key: user.key })).json.data as any[]).map((k) => [k.id, k.spent_today]));
    expect(spentToday).toMatchObject({ [parent.id]: 10, [child.id]: 4, [grandchild.id]: 2, [next.id]: 0 });
  });

  it("a child's own limit is checked too, and the refusal names the key with the least left", async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 3, stock: 20 });
    const parent = await makeKey(user.key, { spend_limit_per_day: 20 });
    const child = await makeKey(parent.key, { spend_limit_per_day: 5 });
    expect((await buyWith(child.key, product.id)).status).toBe(201);
    const refused = await buyWith(child.key, product.id);
    expectError(refused, 403, 'SPEND_LIMIT_REACHED');
    expect(refused.json.errors).toMatchObject({ limit: 5, spent_today: 3, total: 3, key_id: child.id });
    expect(refused.json.error).toBe(
      `This purchase of $3.00 would take API key ${child.id} past its daily spend limit of $5.00: $2.00 is left today, until the limit resets at ${tomorrow()} (00:00 UTC).`,
    );
    expect((await buyWith(parent.key, product.id)).status).toBe(201);
  });

  it('20 parallel purchases through a parent and two children never pass the family limit together', async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 1, stock: 40 });
    const parent = await makeKey(user.key, { spend_limit_per_day: 7 });
    const [a, b] = [await makeKey(parent.key), await makeKey(parent.key)];
    const keys = [parent.key, a.key, b.key];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => buyWith(keys[i % 3], product.id)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(7);
    for (const r of results.filter((r) => r.status !== 201)) expectError(r, 403, 'SPEND_LIMIT_REACHED');
    expect(await balanceOf(user)).toBe(93);
    const total = await env.DB.prepare('SELECT sum(total_amount_cents) AS cents FROM orders WHERE user_id = ?').bind(user.id).first<{ cents: number }>();
    expect(total!.cents).toBe(700);
  });

  it('a key without a limit (and no limited key above it) is not limited by its children', async () => {
    const user = await newUser({ balance: 50 });
    const product = await newProduct({ price: 5, stock: 10 });
    const child = await makeKey(user.key, { spend_limit_per_day: 5 });
    expect((await buyWith(child.key, product.id)).status).toBe(201);
    expect((await buyWith(user.key, product.id, 3)).status).toBe(201);
  });
});
