import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { call, expectError, newUser, type TestUser } from '../helpers';

const KEY_SHAPE = /^sk_live_[0-9A-Za-z]{40}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

async function createKey(user: TestUser, name = 'Extra key') {
  const res = await call('/api-keys', { key: user.key, body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.json.data as { id: number; name: string; key: string; api_key: string; key_preview: string; created_at: string };
}

async function activeKeyCount(userId: number): Promise<number> {
  const row = await env.DB.prepare('SELECT count(*) AS n FROM api_keys WHERE user_id = ? AND revoked_at IS NULL')
    .bind(userId)
    .first<{ n: number }>();
  return row!.n;
}

async function listKeys(user: TestUser) {
  const res = await call('/api-keys', { key: user.key });
  expect(res.status, res.text).toBe(200);
  return res.json.data as Array<{ id: number; name: string; key_preview: string; last_used_at: string | null; created_at: string }>;
}

describe('GET /api-keys', () => {
  it('lists the active keys with exactly id, name, key_preview, last_used_at, created_at and never the key or its hash', async () => {
    const user = await newUser();
    const created = await createKey(user, 'Second key');

    const res = await call('/api-keys', { key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    const keys = res.json.data as any[];
    expect(keys).toHaveLength(2);
    for (const k of keys) {
      expect(Object.keys(k).sort()).toEqual(['allowed_ips', 'created_at', 'created_by_key_id', 'expires_at', 'id', 'key_preview', 'last_used_at', 'mode', 'name', 'scopes', 'spend_limit_per_day', 'spent_today']);
      expect(k.key_preview).toMatch(/^sk_live_\*\*\*\*[0-9A-Za-z]{4}$/);
      expect(k.created_at).toMatch(ISO_UTC);
    }
    // newest first
    expect(keys[0]).toMatchObject({ id: created.id, name: 'Second key', key_preview: created.key_preview });

    const { results: stored } = await env.DB.prepare('SELECT key_hash FROM api_keys WHERE user_id = ?')
      .bind(user.id)
      .all<{ key_hash: string }>();
    expect(stored).toHaveLength(2);
    for (const secret of [user.key, created.key, ...stored.map((r) => r.key_hash)]) {
      expect(res.text).not.toContain(secret);
    }
  });

  it("does not show another user's keys", async () => {
    const alice = await newUser();
    const bob = await newUser();
    const bobKey = await createKey(bob);
    const ids = (await listKeys(alice)).map((k) => k.id);
    expect(ids).toHaveLength(1);
    expect(ids).not.toContain(bobKey.id);
  });
});

describe('POST /api-keys', () => {
  it('answers 201 with message and data {id, name, key, api_key, key_preview, created_at}', async () => {
    const user = await newUser();
    const res = await call('/api-keys', { key: user.key, body: { name: 'CI key' } });
    expect(res.status, res.text).toBe(201);
    expect(res.json.success).toBe(true);
    expect(typeof res.json.message).toBe('string');
    expect(res.json.message.length).toBeGreaterThan(0);

    const data = res.json.data;
    expect(Object.keys(data).sort()).toEqual(['allowed_ips', 'api_key', 'created_at', 'created_by_key_id', 'expires_at', 'id', 'key', 'key_preview', 'mode', 'name', 'scopes', 'spend_limit_per_day']);
    expect(Number.isInteger(data.id)).toBe(true);
    expect(data.name).toBe('CI key');
    expect(data.key).toMatch(KEY_SHAPE);
    expect(data.api_key).toBe(data.key);
    expect(data.key_preview).toBe(`sk_live_****${data.key.slice(-4)}`);
    expect(data.created_at).toMatch(ISO_UTC);
    expect(data.key).not.toBe(user.key);
  });

  it('issues a key that authenticates as its owner', async () => {
    const user = await newUser();
    const created = await createKey(user);
    const res = await call('/user/profile', { key: created.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.id).toBe(user.id);
  });

  it('stores only the SHA-256 hex hash of the key, never the key itself', async () => {
    const user = await newUser();
    const created = await createKey(user);
    const row = await env.DB.prepare('SELECT * FROM api_keys WHERE id = ?').bind(created.id).first<Record<string, unknown>>();
    expect(row).not.toBeNull();
    expect(row!.user_id).toBe(user.id);
    expect(row!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.key_hash).not.toBe(created.key);
    expect(row!.key_hash).toBe(await sha256Hex(created.key));
    for (const [column, value] of Object.entries(row!)) {
      expect(String(value), `column ${column}`).not.toContain(created.key);
      // not even the random part without the prefix
      expect(String(value), `column ${column}`).not.toContain(created.key.slice('sk_live_'.length));
    }
  });

  it.each([
    ['missing', {}],
    ['empty', { name: '' }],
    ['blank', { name: '   ' }],
    ['101 characters', { name: 'n'.repeat(101) }],
    ['not a string', { name: 42 }],
  ])('rejects a %s name with 422 errors.name and creates nothing', async (_label, body) => {
    const user = await newUser();
    const res = await call('/api-keys', { key: user.key, body });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(Array.isArray(res.json.errors?.name), JSON.stringify(res.json)).toBe(true);
    expect(res.json.errors.name.length).toBeGreaterThan(0);
    expect(await activeKeyCount(user.id)).toBe(1);
  });

  it('accepts a name of exactly 100 characters', async () => {
    const user = await newUser();
    const name = 'a'.repeat(100);
    const created = await createKey(user, name);
    expect(created.name).toBe(name);
    expect((await listKeys(user)).find((k) => k.id === created.id)?.name).toBe(name);
  });

  it('refuses a 6th active key with 400 API_KEY_LIMIT_REACHED', async () => {
    const user = await newUser(); // owns its first key
    for (let i = 2; i <= 5; i++) await createKey(user, `key ${i}`);
    expect(await activeKeyCount(user.id)).toBe(5);

    const res = await call('/api-keys', { key: user.key, body: { name: 'one too many' } });
    expectError(res, 400, 'API_KEY_LIMIT_REACHED');
    expect(await activeKeyCount(user.id)).toBe(5);
    expect(await listKeys(user)).toHaveLength(5);
  });

  it('frees a slot when a key is revoked', async () => {
    const user = await newUser();
    const extra: number[] = [];
    for (let i = 2; i <= 5; i++) extra.push((await createKey(user, `key ${i}`)).id);
    expectError(await call('/api-keys', { key: user.key, body: { name: 'sixth' } }), 400, 'API_KEY_LIMIT_REACHED');

    const del = await call(`/api-keys/${extra[0]}`, { key: user.key, method: 'DELETE' });
    expect(del.status, del.text).toBe(200);

    const again = await call('/api-keys', { key: user.key, body: { name: 'replacement' } });
    expect(again.status, again.text).toBe(201);
    expect(await activeKeyCount(user.id)).toBe(5);
    expectError(await call('/api-keys', { key: user.key, body: { name: 'sixth again' } }), 400, 'API_KEY_LIMIT_REACHED');
  });

  it('holds the limit of 5 under ten concurrent creations', async () => {
    const user = await newUser(); // 1 active key
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call('/api-keys', { key: user.key, body: { name: `concurrent ${i}` } })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(4);
    for (const r of results.filter((r) => r.status !== 201)) expectError(r, 400, 'API_KEY_LIMIT_REACHED');
    expect(await activeKeyCount(user.id)).toBe(5);
    expect(await listKeys(user)).toHaveLength(5);
  });
});

describe('DELETE /api-keys/{id}', () => {
  it('answers 200 {success, message}', async () => {
    const user = await newUser();
    const created = await createKey(user);
    const res = await call(`/api-keys/${created.id}`, { key: user.key, method: 'DELETE' });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['message', 'success']);
    expect(res.json.success).toBe(true);
    expect(typeof res.json.message).toBe('string');
    const row = await env.DB.prepare('SELECT revoked_at FROM api_keys WHERE id = ?').bind(created.id).first<{ revoked_at: string | null }>();
    expect(row!.revoked_at).toMatch(ISO_UTC);
  });

  it('refuses the revoked key on its very next request and drops it from the list', async () => {
    const user = await newUser();
    const created = await createKey(user);
    expect((await call('/wallet/balance', { key: created.key })).status).toBe(200);

    expect((await call(`/api-keys/${created.id}`, { key: user.key, method: 'DELETE' })).status).toBe(200);

    expectError(await call('/wallet/balance', { key: created.key }), 401, 'UNAUTHORIZED');
    const ids = (await listKeys(user)).map((k) => k.id);
    expect(ids).not.toContain(created.id);
    expect(ids).toHaveLength(1);
    // the other key is unaffected
    expect((await call('/wallet/balance', { key: user.key })).status).toBe(200);
  });

  it('lets a key revoke itself, after which it is refused', async () => {
    const user = await newUser();
    const created = await createKey(user);
    const res = await call(`/api-keys/${created.id}`, { key: created.key, method: 'DELETE' });
    expect(res.status, res.text).toBe(200);
    expectError(await call('/api-keys', { key: created.key }), 401, 'UNAUTHORIZED');
  });

  it('answers 404 NOT_FOUND for an unknown key id', async () => {
    const user = await newUser();
    expectError(await call('/api-keys/999999999', { key: user.key, method: 'DELETE' }), 404, 'NOT_FOUND');
  });

  it("answers 404 NOT_FOUND for another user's key and leaves it working", async () => {
    const alice = await newUser();
    const bob = await newUser();
    const bobKey = await createKey(bob);
    expectError(await call(`/api-keys/${bobKey.id}`, { key: alice.key, method: 'DELETE' }), 404, 'NOT_FOUND');
    expect((await call('/wallet/balance', { key: bobKey.key })).status).toBe(200);
    expect(await activeKeyCount(bob.id)).toBe(2);
  });

  it('answers 404 NOT_FOUND for an already revoked key', async () => {
    const user = await newUser();
    const created = await createKey(user);
    expect((await call(`/api-keys/${created.id}`, { key: user.key, method: 'DELETE' })).status).toBe(200);
    const revokedAt = await env.DB.prepare('SELECT revoked_at FROM api_keys WHERE id = ?').bind(created.id).first('revoked_at');
    expectError(await call(`/api-keys/${created.id}`, { key: user.key, method: 'DELETE' }), 404, 'NOT_FOUND');
    // the first revocation time is kept
    expect(await env.DB.prepare('SELECT revoked_at FROM api_keys WHERE id = ?').bind(created.id).first('revoked_at')).toBe(revokedAt);
  });

  it.each(['x', '0', '-1', '1.5', '1e3'])('answers 422 VALIDATION_FAILED for id %s', async (id) => {
    const user = await newUser();
    const res = await call(`/api-keys/${id}`, { key: user.key, method: 'DELETE' });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty('id');
    expect(await activeKeyCount(user.id)).toBe(1);
  });
});

describe('last_used_at', () => {
  it('becomes a timestamp after the key authenticates a request', async () => {
    const user = await newUser();
    const created = await createKey(user);
    expect((await listKeys(user)).find((k) => k.id === created.id)?.last_used_at).toBeNull();

    const used = await call('/user/profile', { key: created.key });
    expect(used.status).toBe(200);

    // written after the response (waitUntil): poll briefly
    let lastUsed: string | null | undefined = null;
    for (let attempt = 0; attempt < 50 && !lastUsed; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      lastUsed = (await listKeys(user)).find((k) => k.id === created.id)?.last_used_at;
    }
    expect(lastUsed).toMatch(ISO_UTC);
    expect(Date.parse(lastUsed!)).toBeGreaterThanOrEqual(Date.parse(created.created_at));
  });
});

describe('concurrent revocations', () => {
  it('ten concurrent DELETEs of one key: exactly one revokes it (200), the others find nothing (404)', async () => {
    const user = await newUser();
    const spare = await call('/api-keys', { key: user.key, body: { name: 'spare' } });
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () => call(`/api-keys/${spare.json.data.id}`, { key: user.key, method: 'DELETE' }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 404)).toHaveLength(9);
  });
});
